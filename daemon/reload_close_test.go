//go:build linux

package daemon

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"

	"go.uber.org/zap"

	"github.com/hearth-mcp/hearth/pkg/tool"
)

// reloadFamily counts the reloads it was asked for after it was closed.
type reloadFamily struct {
	closed            atomic.Bool
	reloadsAfterClose atomic.Int64
}

func (f *reloadFamily) Close() error { f.closed.Store(true); return nil }
func (f *reloadFamily) Reload() error {
	if f.closed.Load() {
		f.reloadsAfterClose.Add(1)
	}
	return nil
}

func (f *reloadFamily) Tools() []tool.Tool {
	return []tool.Tool{tool.For(tool.Tool{
		Name:          "reload_probe",
		Description:   "Answers nothing of interest.",
		InputSchema:   tool.Object(),
		SchemaVersion: 1,
	}, func(context.Context, *tool.Call, struct{}) (struct{}, error) { return struct{}{}, nil })}
}

// A SIGHUP comes on its own goroutine, at any time, the daemon's end
// included: a reload running while the families close neither races with
// the close (go test -race) nor reloads a family already closed.
func TestReloadWhileTheFamiliesClose(t *testing.T) {
	fam := &reloadFamily{}
	d, err := New(Options{Config: socketConfig(t), Log: zap.NewNop(), Env: tool.Env{}, Openers: []tool.Opener{func(tool.Env) (tool.Family, error) { return fam, nil }}})
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
				d.Reload()
			}
		}
	}()
	d.Reload() // one at least before the close
	d.closeFamilies()
	close(stop)
	wg.Wait()
	if n := fam.reloadsAfterClose.Load(); n > 0 {
		t.Fatalf("%d reloads of a closed family", n)
	}
}
