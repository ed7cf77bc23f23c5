//go:build windows

package supervisor

import (
	"encoding/json"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"golang.org/x/sys/windows"
)

// argvReport is what the test binary read in argvEnv mode: Go's own
// reading of its command line, and the line itself.
type argvReport struct {
	Args []string
	Line string
}

// Modes of the test binary, which is the program the Windows tests start.
const (
	argvEnv   = "HEARTH_TEST_ARGV"   // print os.Args[1:] and the raw command line as JSON and exit
	treeEnv   = "HEARTH_TEST_TREE"   // start a sleeping child, write its pid to the file named, sleep
	sleepEnv  = "HEARTH_TEST_SLEEP"  // sleep
	daemonEnv = "HEARTH_TEST_DAEMON" // a daemon: start a tree (treeEnv) as an upstream, sleep
)

func TestMain(m *testing.M) {
	switch {
	case os.Getenv(argvEnv) != "":
		json.NewEncoder(os.Stdout).Encode(argvReport{os.Args[1:], windows.UTF16PtrToString(windows.GetCommandLine())})
		os.Exit(0)
	case os.Getenv(sleepEnv) != "":
		time.Sleep(time.Hour)
		os.Exit(0)
	case os.Getenv(treeEnv) != "":
		// os/exec, not os.StartProcess: on Windows StartProcess wants
		// exactly three files and fails with nil Files.
		exe, _ := os.Executable()
		c := exec.Command(exe)
		c.Env = append(os.Environ(), sleepEnv+"=1")
		if err := c.Start(); err != nil {
			os.WriteFile(os.Getenv(treeEnv), []byte("error: "+err.Error()), 0o600)
			os.Exit(3)
		}
		os.WriteFile(os.Getenv(treeEnv), []byte(strconv.Itoa(c.Process.Pid)), 0o600)
		time.Sleep(time.Hour)
		os.Exit(0)
	case os.Getenv(daemonEnv) != "":
		exe, _ := os.Executable()
		env := append(os.Environ(), treeEnv+"="+os.Getenv(daemonEnv))
		if _, err := New(Options{}).Start(ProcessSpec{Path: exe, Env: env}); err != nil {
			os.Exit(3)
		}
		time.Sleep(time.Hour)
		os.Exit(0)
	}
	os.Exit(m.Run())
}
