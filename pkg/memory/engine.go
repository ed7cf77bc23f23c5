package memory

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"go.uber.org/zap"

	"github.com/hearth-mcp/hearth/pkg/guard"
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
			return nil, guardRefusal(err) // not a nil *pgstore.Store in a non-nil interface
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
	created, err = pgstore.Check(ctx, e.dsn, e.build)
	return created, guardRefusal(err)
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
		return "", guardRefusal(err)
	}
	return res.String(), nil
}

// guardRefusal makes an engine's refusal of its database's format
// (*store.FormatError) the version guard's refusal too, so hearthd exits
// with the guard's code (65 without a marker, 78 for another format) as it
// does for a data directory; the engine's error stays in the chain, so
// store.ErrUnavailable still matches. Other errors pass unchanged. (The
// engines do not import the guard: it is the daemon process's.)
func guardRefusal(err error) error {
	var fe *store.FormatError
	if !errors.As(err, &fe) {
		return err
	}
	code := guard.ExitConfig
	if fe.Reason == store.ReasonNoMarker {
		code = guard.ExitDataErr
	}
	return refusal{err: err, guard: &guard.Error{ExitCode: code, Reason: fe.Reason, Home: fe.Where, Found: fe.Found, Want: fe.Want, Message: fe.Message}}
}

// refusal is an engine's error that is also the guard's.
type refusal struct {
	err   error
	guard *guard.Error
}

func (r refusal) Error() string   { return r.err.Error() }
func (r refusal) Unwrap() []error { return []error{r.err, r.guard} }
