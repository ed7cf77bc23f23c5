//go:build linux

package test

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
)

// doctorChecks are the mechanisms `hearthd doctor` names, in its order.
var doctorChecks = []string{"socket directory", "socket peer check", "shim relay", "keeper ends tree", "client environment",
	"atomic replace", "service entry", "data directory lock", "file ownership"}

type doctorCheck struct{ Name, Status, Detail, Meaning string }

// doctorBinary is the hearthd the doctor's tests run: the release
// archive's for linux/amd64 when one is named (releaseEnv), else the one
// built for the tests; the shim beside it either way.
func doctorBinary(t *testing.T) string {
	if dir := releaseBinaries(t, "linux"); dir != "" {
		return filepath.Join(dir, "hearthd")
	}
	return bin.hearthd
}

// runDoctor runs `hearthd doctor --json` with env and returns its checks
// by name and its exit code.
func runDoctor(t *testing.T, cmd *exec.Cmd) (map[string]doctorCheck, int) {
	t.Helper()
	out, err := cmd.Output()
	code := 0
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		code = exit.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	var r struct{ Checks []doctorCheck }
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("hearthd doctor --json: %v\n%s", err, out)
	}
	byName := map[string]doctorCheck{}
	for i, c := range r.Checks {
		if i >= len(doctorChecks) || c.Name != doctorChecks[i] {
			t.Fatalf("check %d is %q; want the checks %q in order", i, c.Name, doctorChecks)
		}
		byName[c.Name] = c
	}
	if len(byName) != len(doctorChecks) {
		t.Fatalf("checks %+v; want %q", r.Checks, doctorChecks)
	}
	return byName, code
}

// doctorEnv is a private runtime directory, home and temporary directory.
func doctorEnv(t *testing.T, extra ...string) []string {
	env, runtime, _ := shimEnv(t, extra...)
	return append(env, "TMPDIR="+runtime)
}

// Natively and over the portable mechanisms, every check passes (or, for
// the client's environment under HEARTH_PORTABLE=1, names the fallback),
// and the service entry is verified where systemd-analyze is.
func TestDoctorPasses(t *testing.T) {
	_, err := exec.LookPath("systemd-analyze")
	needOrSkip(t, err == nil, "systemd-analyze (Debian package systemd)")
	for _, mode := range []string{"native", "portable"} {
		t.Run(mode, func(t *testing.T) {
			env := doctorEnv(t)
			if mode == "portable" {
				env = append(env, "HEARTH_PORTABLE=1")
			}
			cmd := exec.Command(doctorBinary(t), "doctor", "--json")
			cmd.Env = env
			checks, code := runDoctor(t, cmd)
			for _, name := range doctorChecks {
				want := "ok"
				if mode == "portable" && name == "client environment" {
					want = "fallback"
				}
				if c := checks[name]; c.Status != want {
					t.Errorf("%s: %s (%s), want %s", name, c.Status, c.Detail, want)
				}
			}
			if code != 0 {
				t.Errorf("exit %d with every check passing", code)
			}
		})
	}
}

// One mechanism broken at a time: doctor names it as failed, and exits 1.
func TestDoctorNamesABrokenMechanism(t *testing.T) {
	t.Run("a socket directory others may enter", func(t *testing.T) {
		runtime := shortTempDir(t)
		open := filepath.Join(runtime, "hearth")
		if err := os.Mkdir(open, 0o755); err != nil {
			t.Fatal(err)
		}
		os.Chmod(open, 0o777)
		cmd := exec.Command(doctorBinary(t), "doctor", "--json")
		cmd.Env = append(doctorEnv(t), "XDG_RUNTIME_DIR="+runtime)
		checks, code := runDoctor(t, cmd)
		if c := checks["socket directory"]; c.Status != "fail" || c.Meaning == "" {
			t.Errorf("socket directory at 0777: %+v, want a failure saying what it means", c)
		}
		if code != 1 {
			t.Errorf("exit %d, want 1", code)
		}
	})
	t.Run("an unreadable client environment", func(t *testing.T) {
		// The doctor runs as nobody, its parent (this test) as root: the
		// parent's environment is not its to read, as a client's of
		// another user would not be a shim's.
		needOrSkip(t, os.Getuid() == 0, "root (to run the doctor as nobody under a parent it cannot read)")
		dir, err := os.MkdirTemp("", "hearth-doctor-")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(dir) })
		os.Chmod(dir, 0o700)
		if err := os.Chown(dir, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(doctorBinary(t), "doctor", "--json")
		cmd.Env = append(os.Environ(), "HOME="+dir, "XDG_RUNTIME_DIR="+dir, "TMPDIR="+dir, "HEARTH_HOME=", "HEARTH_CONFIG=", "MCP_SOCKET_PATH=", "HEARTH_PORTABLE=")
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		checks, code := runDoctor(t, cmd)
		if c := checks["client environment"]; c.Status != "fail" || c.Meaning == "" {
			t.Errorf("a parent's environment another user's: %+v, want a failure saying what it means", c)
		}
		if code != 1 {
			t.Errorf("exit %d, want 1", code)
		}
	})
	t.Run("a keeper that cannot kill", func(t *testing.T) {
		// A keeper stopped (SIGSTOP, as a debugger or a system that
		// suspends processes would leave it) cannot end the tree when the
		// doctor kills its daemon. The keeper lives from the hosted
		// server's start to the daemon's kill, a few milliseconds: a run
		// in which it was not caught in time is run again.
		for attempt := 1; attempt <= 5; attempt++ {
			env := doctorEnv(t)
			tmp := "TMPDIR=" + envValue(env, "TMPDIR") // the doctor's own, so its keeper's
			cmd := exec.Command(doctorBinary(t), "doctor", "--json")
			cmd.Env = env
			stopped := make(chan int, 1)
			done := make(chan struct{})
			go func() { stopped <- stopKeeperOf(cmd.Path, tmp, done) }()
			checks, code := runDoctor(t, cmd)
			close(done)
			pid := <-stopped
			if pid != 0 {
				syscall.Kill(pid, syscall.SIGKILL)
			}
			c := checks["keeper ends tree"]
			if pid == 0 || c.Status == "ok" {
				t.Logf("attempt %d: the keeper was not stopped before it acted (pid %d, %s: %s)", attempt, pid, c.Status, c.Detail)
				continue
			}
			if c.Status != "fail" || c.Meaning == "" {
				t.Errorf("a stopped keeper: %+v, want a failure saying what it means", c)
			}
			if code != 1 {
				t.Errorf("exit %d, want 1", code)
			}
			return
		}
		t.Fatal("in five runs the keeper was never stopped before the doctor killed its daemon")
	})
}

// stopKeeperOf stops (SIGSTOP) the first keeper of the hearthd at exe
// whose environment holds kv, as soon as it appears, and returns its pid;
// 0 when done closed first.
func stopKeeperOf(exe, kv string, done <-chan struct{}) int {
	for {
		select {
		case <-done:
			return 0
		default:
		}
		for _, p := range imageProcesses(exe) {
			if hasEnv(p.environ, kv) && hasEnvName(p.environ, "HEARTH_KEEPER") {
				syscall.Kill(p.pid, syscall.SIGSTOP)
				return p.pid
			}
		}
	}
}
