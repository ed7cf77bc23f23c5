package memory

import (
	"context"
	"fmt"
	"path/filepath"

	"go.uber.org/zap"

	"github.com/hearth-mcp/hearth/pkg/memory/pgstore"
	"github.com/hearth-mcp/hearth/pkg/memory/sqlitestore"
	"github.com/hearth-mcp/hearth/pkg/memory/store"
)

// Engine is the memory store the settings choose: the one place that reads
// HEARTH_STORE_URL and knows the two engines. The family opens its store
// through it, and hearthd checks the format before serving, migrates, and
// opens the store for `hearthd memory`, without importing either engine.
type Engine struct {
	home  string // the data directory ("" when there is none)
	dsn   string // the PostgreSQL database; "" for SQLite
	build string // the hearthd version, for a format marker it writes
}

// EngineFor is the engine the settings (getenv) name for the data directory
// home: PostgreSQL when HEARTH_STORE_URL is set, else SQLite in home.
func EngineFor(home string, getenv func(string) string, build string) Engine {
	e := Engine{home: home, build: build}
	if getenv != nil {
		e.dsn = getenv(EnvStoreURL)
	}
	return e
}

// Server reports whether the store is a database server's (PostgreSQL),
// which has a format marker of its own beside the data directory's.
func (e Engine) Server() bool { return e.dsn != "" }

// Name names the engine in the -32000 "Database connection failed. Please
// check <engine> is running." message.
func (e Engine) Name() string {
	if e.Server() {
		return "PostgreSQL"
	}
	return "SQLite"
}

// Describe names the store for daemon_status and logs, without
// credentials: "sqlite <path>" or "postgres <user@host:port/db>".
func (e Engine) Describe() string {
	if e.Server() {
		return "postgres " + pgstore.Describe(e.dsn)
	}
	return "sqlite " + filepath.Join(e.home, StoreFile)
}

// Format is the format the server's database must be in ("" for SQLite,
// whose format is the data directory's).
func (e Engine) Format() string {
	if e.Server() {
		return pgstore.Format
	}
	return ""
}

// Engines is what both engines are: a store of memories and its graph.
type Engines interface {
	store.Store
	store.Graph
}

// Open opens the store. Its errors wrap store.ErrUnavailable; the version
// guard's refusal of a PostgreSQL database is a *guard.Error inside.
func (e Engine) Open(ctx context.Context, log *zap.Logger) (Engines, error) {
	if e.Server() {
		opts := pgstore.Options{Build: e.build, Log: log}
		if e.home != "" {
			opts.Snapshot = filepath.Join(e.home, PGSnapshotFile)
		}
		st, err := pgstore.Open(ctx, e.dsn, opts)
		if err != nil {
			return nil, err // not a nil *pgstore.Store in a non-nil interface
		}
		return st, nil
	}
	if e.home == "" {
		return nil, fmt.Errorf("%w: no data directory", store.ErrUnavailable)
	}
	path := filepath.Join(e.home, StoreFile)
	st, err := sqlitestore.OpenWith(ctx, path, sqlitestore.Options{Snapshot: sqlitestore.SnapshotPath(path), Log: log})
	if err != nil {
		return nil, err
	}
	return st, nil
}

// Check runs the format guard on a server's database before anything is
// served, creating the tables in a fresh one; a refusal is a *guard.Error.
// SQLite has nothing to check here (the data directory's guard covers it):
// false, nil.
func (e Engine) Check(ctx context.Context) (created bool, err error) {
	if !e.Server() {
		return false, nil
	}
	return pgstore.Check(ctx, e.dsn, e.build)
}

// Migrate is `hearthd migrate` for a server's database: it creates, moves
// forward or (with adopt) marks its tables, and says what it did. SQLite
// has nothing to migrate here (the data directory's migration covers it):
// "", nil.
func (e Engine) Migrate(ctx context.Context, adopt bool) (string, error) {
	if !e.Server() {
		return "", nil
	}
	res, err := pgstore.Migrate(ctx, e.dsn, e.build, adopt)
	if err != nil {
		return "", err
	}
	return res.String(), nil
}
