package pgstore_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/hearth-mcp/hearth/pkg/memory/pgstore"
	"github.com/hearth-mcp/hearth/pkg/memory/pgstore/pgtest"
	"github.com/hearth-mcp/hearth/pkg/memory/store"
	"github.com/hearth-mcp/hearth/pkg/memory/storetest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// open opens a store on a fresh database of the shared server.
func open(t *testing.T, dsn string, opts pgstore.Options) *pgstore.Store {
	t.Helper()
	if opts.Build == "" {
		opts.Build = "test"
	}
	s, err := pgstore.Open(context.Background(), dsn, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestContract(t *testing.T) {
	srv := pgtest.Shared(t)
	storetest.Run(t, func(t *testing.T) store.Store {
		return open(t, srv.DSN(srv.CreateDB(t)), pgstore.Options{Snapshot: filepath.Join(t.TempDir(), "memory.index")})
	})
}

// TestContractByURL: the postgres:// form of the setting works alike.
func TestContractByURL(t *testing.T) {
	srv := pgtest.Shared(t)
	storetest.Run(t, func(t *testing.T) store.Store {
		return open(t, srv.URL(srv.CreateDB(t)), pgstore.Options{})
	})
}

func TestGraphContract(t *testing.T) {
	srv := pgtest.Shared(t)
	storetest.RunGraph(t, func(t *testing.T) store.Store {
		return open(t, srv.DSN(srv.CreateDB(t)), pgstore.Options{Snapshot: filepath.Join(t.TempDir(), "memory.index")})
	})
}

// TestNULRefusedAlone: a memory holding U+0000, which PostgreSQL's text
// cannot keep, is refused by itself; the adds committed beside it are not.
// (It used to join a group commit and fail every add in it.)
func TestNULRefusedAlone(t *testing.T) {
	srv := pgtest.Shared(t)
	s := open(t, srv.DSN(srv.CreateDB(t)), pgstore.Options{})
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make([]error, 40)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			text := fmt.Sprintf("memory %d", i)
			if i%10 == 0 {
				text = "bad\x00memory"
			}
			_, errs[i] = s.Add(ctx, store.NewMemory{Workspace: "w", Text: text, Chunks: []string{text}})
		}()
	}
	wg.Wait()
	for i, err := range errs {
		switch {
		case i%10 == 0 && (err == nil || !strings.Contains(err.Error(), "NUL character") || errors.Is(err, store.ErrUnavailable)):
			t.Errorf("add %d (with NUL): %v", i, err)
		case i%10 != 0 && err != nil:
			t.Errorf("add %d failed beside a NUL one: %v", i, err)
		}
	}
	if st, err := s.Stats(ctx); err != nil || st.Memories != 36 {
		t.Fatalf("stats: %+v %v; want 36 memories", st, err)
	}
}
