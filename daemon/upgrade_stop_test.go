//go:build linux

package daemon

import (
	"context"
	"net"
	"os"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
)

// A daemon told to stop (a signal, its idle timeout) while it checks a new
// executable (its `version` takes up to 10 s) stops: the check that ends
// after that starts no successor, which would turn the stop into a restart
// and be handed the upstreams meant to stop.
func TestNoHandOverOnceTheDaemonStops(t *testing.T) {
	cfg := socketConfig(t)
	core, logs := observer.New(zap.InfoLevel)
	var mu sync.Mutex
	var started []string
	startSuccessor := func(exe string) (*os.File, int, error) {
		mu.Lock()
		defer mu.Unlock()
		started = append(started, exe)
		r, w, _ := os.Pipe()
		t.Cleanup(func() { r.Close(); w.Close() })
		return w, 4242, nil
	}
	checking, proceed := make(chan struct{}), make(chan struct{})
	var once sync.Once
	checkUpgrade := func() (string, error) {
		once.Do(func() { close(checking) })
		<-proceed
		return "/opt/hearth/hearthd", nil
	}
	d, err := New(Options{Config: cfg, Log: zap.New(core), StartSuccessor: startSuccessor, CheckUpgrade: checkUpgrade})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	waitReady(t, cfg.ReadyFile)
	conn, err := net.Dial("unix", cfg.SocketPath) // kicks a check
	if err != nil {
		t.Fatal(err)
	}
	conn.Close()
	select {
	case <-checking:
	case <-time.After(10 * time.Second):
		t.Fatal("a connection did not kick a check")
	}
	cancel() // the signal
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	close(proceed) // the new file's version answers now
	for deadline := time.Now().Add(10 * time.Second); logs.FilterMessageSnippet("could not hand over").Len() == 0 &&
		logs.FilterMessageSnippet("handing over to a new daemon").Len() == 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the check's end was not logged")
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(started) != 0 {
		t.Fatalf("a stopped daemon started a successor: %v", started)
	}
}
