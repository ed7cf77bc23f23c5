package daemon

import (
	"context"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/hearth-mcp/hearth/pkg/tool"
)

// upgradeDaemon builds a daemon of mode with o's hooks.
func upgradeDaemon(t *testing.T, mode Mode, o Options) (*Daemon, *observer.ObservedLogs) {
	t.Helper()
	home := t.TempDir()
	core, logs := observer.New(zap.InfoLevel)
	env := tool.Env{Home: home, Getenv: func(k string) string {
		if k == "HEARTH_HOME" {
			return home
		}
		return ""
	}, Log: zap.NewNop(), Version: "test"}
	o.Config, o.Log, o.Env = Config{Mode: mode}, zap.New(core), env
	d, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return d, logs
}

// A kick checks for an upgrade; an upgrade found goes through the hand-over
// of hearthd restart (its successor started once, this daemon told to stop
// serving). A successor that cannot start is logged and the daemon serves
// on; the check (upgrade.Watch) names each new file once, so it is not
// started again.
func TestUpgradeFoundHandsOver(t *testing.T) {
	var mu sync.Mutex
	var started []string
	fail := true
	startSuccessor := func(exe string) (*os.File, int, error) {
		mu.Lock()
		defer mu.Unlock()
		started = append(started, exe)
		if fail {
			return nil, 0, errors.New("exec format error")
		}
		r, w, _ := os.Pipe()
		t.Cleanup(func() { r.Close(); w.Close() })
		return w, 4242, nil
	}
	found := make(chan string, 1)
	checkUpgrade := func() (string, error) {
		select {
		case exe := <-found:
			return exe, nil
		default:
			return "", nil
		}
	}
	d, logs := upgradeDaemon(t, ModeSocket, Options{StartSuccessor: startSuccessor, CheckUpgrade: checkUpgrade})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	kick := make(chan struct{}, 1)
	done := make(chan struct{})
	go func() { defer close(done); d.watchUpgrade(ctx, kick) }()

	count := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(started)
	}
	found <- "/opt/hearth/hearthd"
	kickUpgrade(kick)
	for deadline := time.Now().Add(10 * time.Second); logs.FilterMessageSnippet("could not hand over").Len() == 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("a successor that failed to start was not logged")
		}
	}
	select {
	case <-d.handingOver():
		t.Fatal("the daemon stopped serving though its successor did not start")
	default:
	}
	// Nothing new found: nothing started.
	kickUpgrade(kick)
	kickUpgrade(kick)
	mu.Lock()
	fail = false
	mu.Unlock()
	found <- "/opt/hearth/hearthd"
	kickUpgrade(kick)
	select {
	case <-d.handingOver():
	case <-time.After(10 * time.Second):
		t.Fatal("the daemon did not hand over to the upgrade")
	}
	<-done // it watches no more once handing over
	if n := count(); n != 2 {
		t.Fatalf("successors started: %v, want the failed one and the one that ran", started)
	}
	if logs.FilterMessageSnippet("handing over to a new daemon").Len() != 1 {
		t.Fatal("the hand-over was not logged")
	}
}

// A stdio daemon does not watch (it ends with its client): no check is
// made however often it is kicked.
func TestStdioDaemonDoesNotWatchForUpgrades(t *testing.T) {
	d, _ := upgradeDaemon(t, ModeStdio, Options{
		StartSuccessor: func(string) (*os.File, int, error) {
			t.Error("a successor was started")
			return nil, 0, errors.New("no")
		},
		CheckUpgrade: func() (string, error) { t.Error("a stdio daemon checked for an upgrade"); return "", nil },
	})
	kick := make(chan struct{}, 1)
	kickUpgrade(kick)
	done := make(chan struct{})
	go func() { defer close(done); d.watchUpgrade(context.Background(), kick) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("a stdio daemon watches for upgrades")
	}
}

// $/hearth/handover starts the daemon's own executable and nothing else:
// a request that names another program is refused without starting
// anything, one that names the daemon's own (or none) starts it.
func TestHandOverStartsOnlyTheOwnExecutable(t *testing.T) {
	var started []string
	startSuccessor := func(exe string) (*os.File, int, error) {
		started = append(started, exe)
		r, w, _ := os.Pipe()
		t.Cleanup(func() { r.Close(); w.Close() })
		return w, 4242, nil
	}
	unknown, _ := upgradeDaemon(t, ModeSocket, Options{StartSuccessor: startSuccessor})
	if _, err := unknown.handOverControl(context.Background(), []byte(`{"exe":"/opt/hearth/hearthd"}`)); err == nil {
		t.Fatal("a daemon that knows no executable of its own handed over")
	}
	d, _ := upgradeDaemon(t, ModeSocket, Options{StartSuccessor: startSuccessor, Executable: "/usr/local/bin/hearthd"})
	_, err := d.handOverControl(context.Background(), []byte(`{"exe":"/tmp/evil"}`))
	if err == nil || !strings.Contains(err.Error(), "only to its own executable, /usr/local/bin/hearthd") || len(started) != 0 {
		t.Fatalf("another program named: %v, started %v", err, started)
	}
	if _, err := d.handOverControl(context.Background(), []byte(`{"exe":"/usr/local/bin/../bin/hearthd"}`)); err != nil || len(started) != 1 || started[0] != d.opts.Executable {
		t.Fatalf("its own executable: %v, started %v", err, started)
	}
}
