//go:build unix

package test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// escapingUpstream is `sh -c` that starts two descendants leaving the
// upstream's process group, then becomes hostedserver: one calls setsid,
// one is double-forked into a session of its own and keeps the upstream's
// stdout (as node's spawn({detached: true}) or a daemonizing child does).
// Each sleeps a duration no other process sleeps, by which the test finds
// it (sleepersOf).
func escapingUpstream(t *testing.T, base int) (args []string, marks []string) {
	marks = []string{fmt.Sprint(base), fmt.Sprint(base + 1)}
	script := fmt.Sprintf("setsid sleep %s >/dev/null 2>&1 </dev/null & (setsid sh -c 'sleep %s & exit' &); exec %s",
		marks[0], marks[1], filepath.Join(bin.dir, "hostedserver"))
	return []string{"/bin/sh", "-c", script}, marks
}

// sleepersOf lists the live processes that sleep for one of marks seconds.
func sleepersOf(marks []string) []int {
	return liveProcesses(func(dir string, _ []string) bool {
		cmd, _ := os.ReadFile(filepath.Join(dir, "cmdline"))
		for _, m := range marks {
			if bytes.Equal(cmd, []byte("sleep\x00"+m+"\x00")) {
				return true
			}
		}
		return false
	})
}

// awaitSleepers waits until want of marks' sleepers are alive (all of them,
// or none), within a bound no healthy run approaches; at the bound the
// survivors are killed and reported.
func awaitSleepers(t *testing.T, marks []string, all bool, after string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		alive := sleepersOf(marks)
		if all && len(alive) == len(marks) || !all && len(alive) == 0 {
			return
		}
		if time.Now().After(deadline) {
			if all {
				t.Fatalf("the escaping descendants never all ran: %v", alive)
			}
			for _, pid := range alive {
				syscall.Kill(pid, syscall.SIGKILL)
			}
			t.Fatalf("descendants of the upstream alive after %s: %v", after, alive)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Every descendant of a hosted upstream ends with it, whatever session it
// moved to: after kill -9 of the daemon, and after hearthd servers stop,
// with the keeper learning of the daemon's death from the kernel (native)
// and from its pipe (portable, as off Linux).
func TestHostedDescendantsEndWithTheUpstream(t *testing.T) {
	base := 700000 + os.Getpid()%10000*10
	for i, mode := range []struct{ name, portable string }{{"native", "0"}, {"portable", "1"}} {
		t.Run(mode.name, func(t *testing.T) {
			env, runtime, _ := shimEnv(t, "HEARTH_KEEPER_PORTABLE="+mode.portable)

			args, marks := escapingUpstream(t, base+4*i)
			cs := runClient(t, env, nil, "2025-11-25", args...)
			if out, _ := callText(t, cs, "echo", map[string]any{"text": "kept"}); !strings.HasPrefix(out, "kept") {
				t.Fatalf("echo: %q", out)
			}
			awaitSleepers(t, marks, true, "")
			checkMechanisms(t, env, runtime, mode.portable == "1")
			killDaemonsIn(runtime)
			awaitSleepers(t, marks, false, "kill -9 of the daemon")
			cs.Close()

			args, marks = escapingUpstream(t, base+4*i+2)
			cs = runClient(t, env, nil, "2025-11-25", args...)
			if out, _ := callText(t, cs, "echo", map[string]any{"text": "kept"}); !strings.HasPrefix(out, "kept") {
				t.Fatalf("echo: %q", out)
			}
			awaitSleepers(t, marks, true, "")
			// The instance is named after what it runs (hostedserver, as
			// others here are): stopped by its key, found by its command line.
			var st struct {
				Hosted []struct{ Server, Key string } `json:"hosted"`
			}
			if err := json.Unmarshal(statusJSON(t, env), &st); err != nil {
				t.Fatal(err)
			}
			key := ""
			for _, h := range st.Hosted {
				if strings.Contains(h.Server, "sleep "+marks[0]) {
					key = h.Key
				}
			}
			if key == "" {
				t.Fatalf("no instance runs the escaping upstream: %+v", st.Hosted)
			}
			stop := exec.Command(bin.hearthd, "servers", "stop", key)
			stop.Env = env
			if o, err := stop.CombinedOutput(); err != nil || !strings.Contains(string(o), "stopped") || strings.Contains(string(o), "stopped 0") {
				t.Fatalf("servers stop: %v %s", err, o)
			}
			awaitSleepers(t, marks, false, "hearthd servers stop")
		})
	}
}

// checkMechanisms checks that the daemon in runtime runs the mechanisms
// this run selected: its keepers learn of its death by the parent-death
// signal, or by their death socket alone ("pipe": keeperPortable, or
// HEARTH_PORTABLE for the whole run); its clients' shims hand their stdio
// over ("direct"), or relay under HEARTH_PORTABLE.
func checkMechanisms(t *testing.T, env []string, runtime string, keeperPortable bool) {
	t.Helper()
	wantKeeper := "HEARTH_KEEPER=signal"
	if keeperPortable || portableRun() {
		wantKeeper = "HEARTH_KEEPER=pipe"
	}
	daemons := daemonsIn(runtime)
	if len(daemons) != 1 {
		t.Fatalf("want one daemon in %s, found %v", runtime, daemons)
	}
	parent := fmt.Sprint(daemons[0])
	var modes []string
	for _, pid := range liveProcesses(func(dir string, stat []string) bool {
		comm, _ := os.ReadFile(filepath.Join(dir, "comm"))
		return stat[1] == parent && strings.TrimSpace(string(comm)) == "hearth-keeper"
	}) {
		environ, _ := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
		for _, kv := range strings.Split(string(environ), "\x00") {
			if strings.HasPrefix(kv, "HEARTH_KEEPER=") {
				modes = append(modes, kv)
			}
		}
	}
	if len(modes) == 0 {
		t.Fatalf("no keeper is the daemon's child")
	}
	for _, m := range modes {
		if m != wantKeeper {
			t.Fatalf("keepers %v, want %s", modes, wantKeeper)
		}
	}
	var st struct {
		Clients []struct{ Transport string } `json:"clients"`
	}
	if err := json.Unmarshal(statusJSON(t, env), &st); err != nil {
		t.Fatal(err)
	}
	if len(st.Clients) == 0 {
		t.Fatal("hearthd status lists no client")
	}
	for _, c := range st.Clients {
		if c.Transport != "socket" && c.Transport != shimTransport() { // "socket": hearthd status itself
			t.Fatalf("clients %+v, want transport %s", st.Clients, shimTransport())
		}
	}
	t.Logf("keepers %v, %d clients over %s", modes, len(st.Clients), shimTransport())
}
