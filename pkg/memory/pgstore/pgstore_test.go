package pgstore_test

import (
	"context"
	"os"
	"path/filepath"
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
