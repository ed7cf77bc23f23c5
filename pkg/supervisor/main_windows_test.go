//go:build windows

package supervisor

import (
	"encoding/json"
	"os"
	"strconv"
	"testing"
	"time"
)

// Modes of the test binary, which is the program the Windows tests start.
const (
	argvEnv   = "HEARTH_TEST_ARGV"   // print os.Args[1:] as JSON and exit
	treeEnv   = "HEARTH_TEST_TREE"   // start a sleeping child, write its pid to the file named, sleep
	sleepEnv  = "HEARTH_TEST_SLEEP"  // sleep
	daemonEnv = "HEARTH_TEST_DAEMON" // a daemon: start a tree (treeEnv) as an upstream, sleep
)

func TestMain(m *testing.M) {
	switch {
	case os.Getenv(argvEnv) != "":
		json.NewEncoder(os.Stdout).Encode(os.Args[1:])
		os.Exit(0)
	case os.Getenv(sleepEnv) != "":
		time.Sleep(time.Hour)
		os.Exit(0)
	case os.Getenv(treeEnv) != "":
		exe, _ := os.Executable()
		p, err := os.StartProcess(exe, []string{exe}, &os.ProcAttr{Env: append(os.Environ(), sleepEnv+"=1")})
		if err != nil {
			os.Exit(3)
		}
		os.WriteFile(os.Getenv(treeEnv), []byte(strconv.Itoa(p.Pid)), 0o600)
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
