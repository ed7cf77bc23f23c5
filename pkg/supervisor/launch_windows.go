//go:build windows

package supervisor

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"

	"golang.org/x/sys/windows"
)

func init() { command = windowsCommand }

// windowsCommand is the Cmd that runs name with args in dir, as Windows needs
// (docs/decisions/0048-windows-processes.md): name is resolved as Go's
// exec.LookPath does there (PATH and PATHEXT, so npx is npx.cmd; a name
// found only in the current directory is refused), then windowsLaunch
// says how: an .exe or .com directly, a batch file through the system's
// cmd.exe with a command line quoted for cmd, an argument that cannot be
// quoted safely refused.
func windowsCommand(ctx context.Context, name string, args []string, dir string) (*exec.Cmd, error) {
	path := name
	if dir != "" && strings.ContainsAny(name, `\/`) && !filepath.IsAbs(name) {
		path = filepath.Join(dir, name) // relative to the child's directory, as exec takes it
	}
	resolved, err := exec.LookPath(path)
	if err != nil {
		return nil, err
	}
	system, err := windows.GetSystemDirectory()
	if err != nil {
		return nil, err
	}
	program, line, err := windowsLaunch(resolved, args, filepath.Join(system, "cmd.exe"))
	if err != nil {
		return nil, err
	}
	if line == "" {
		return exec.CommandContext(ctx, program, args...), nil
	}
	cmd := exec.CommandContext(ctx, program)
	cmd.SysProcAttr = &syscall.SysProcAttr{CmdLine: line}
	return cmd, nil
}
