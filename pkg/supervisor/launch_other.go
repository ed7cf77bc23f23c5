//go:build !windows

package supervisor

import (
	"context"
	"os/exec"
)

// command is the Cmd that runs name with args: exec resolves name through
// PATH, and a failure to find it is Start's error.
func command(ctx context.Context, name string, args []string, dir string) (*exec.Cmd, error) {
	return exec.CommandContext(ctx, name, args...), nil
}
