package memory

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/hearth-mcp/hearth/pkg/memory/sqlitestore"
	"github.com/hearth-mcp/hearth/pkg/tool"
)

const crashHomeEnv = "HEARTH_MEMORY_CRASH_CHILD_HOME"

// TestCrashChild is the child of TestSIGKILLKeepsAnsweredAdds: it adds
// memories from several goroutines through the add_memory handler and prints
// each id once its add has been answered, until it is killed.
func TestCrashChild(t *testing.T) {
	home := os.Getenv(crashHomeEnv)
	if home == "" {
		t.Skip("runs only as the child of TestSIGKILLKeepsAnsweredAdds")
	}
	f := openFamily(tool.Env{Home: home, Getenv: func(string) string { return "" }, Log: zap.NewNop()}, time.Hour, time.Hour)
	handler := f.Tools()[0].Handler
	var out sync.Mutex
	var wg sync.WaitGroup
	deadline := time.Now().Add(2 * time.Minute) // never outlive a parent that failed to kill us
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; time.Now().Before(deadline); i++ {
				args := fmt.Sprintf(`{"text":"crash test memory g%d i%d with some words to index"}`, g, i)
				res, err := handler(context.Background(), tool.NewCall("add_memory", []byte(args), nil, tool.Client{}, nil))
				if err != nil {
					fmt.Fprintln(os.Stderr, "add failed:", err)
					os.Exit(3)
				}
				out.Lock()
				// One write(2) per line, unbuffered: once it returns the parent can read it.
				fmt.Fprintf(os.Stdout, "id %s\n", res.(addResult).MemoryID)
				out.Unlock()
			}
		}()
	}
	wg.Wait()
}

func TestSIGKILLKeepsAnsweredAdds(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns a child process")
	}
	home := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), crashHomeEnv+"="+home)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	killAfter := 50 + rand.IntN(950) // a random moment, counted in answered adds
	var ids []string
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		if id, ok := strings.CutPrefix(sc.Text(), "id "); ok {
			ids = append(ids, id)
			if len(ids) == killAfter {
				if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	// Lines written before the kill are still in the pipe and read above.
	werr := cmd.Wait()
	if len(ids) < killAfter {
		t.Fatalf("child stopped after %d adds (wanted to kill it after %d): %v\n%s", len(ids), killAfter, werr, stderr.String())
	}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("child did not die of SIGKILL: %v", werr)
	}
	t.Logf("killed after %d answered adds (target %d)", len(ids), killAfter)

	s, err := sqlitestore.Open(context.Background(), filepath.Join(home, StoreFile))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, id := range ids {
		if _, err := s.Get(context.Background(), id); err != nil {
			t.Fatalf("answered memory %s lost after SIGKILL: %v", id, err)
		}
	}
	st, err := s.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if st.Memories < int64(len(ids)) {
		t.Fatalf("%d memories after restart, %d were answered", st.Memories, len(ids))
	}
}
