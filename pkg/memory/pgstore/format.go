package pgstore

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/hearth-mcp/hearth/pkg/memory/store"
)

// Format is the database format this build reads and writes, MAJOR.MINOR:
// the one place it is named. Its rules are the data directory's
// (docs/architecture.md, "The version guard"): a fresh database is created
// in this format; the same format goes on; another format is refused (exit
// 78) naming both and `hearthd migrate`; hearth tables without a marker are
// refused (exit 65); a refused database is not touched. A change an older
// hearthd must not open bumps Format and adds a step to steps.
const Format = "1.2"

// schema creates format 1.0, the first; a fresh database gets it and then
// every step after it (create).
//
//go:embed schema.sql
var schema string

// graphSchema moves format 1.0 to 1.1: the memory graph's tables.
//
//go:embed format-1.1.sql
var graphSchema string

// pruneSchema moves format 1.1 to 1.2: where daemons are in the change
// logs, and up to where the logs were pruned.
//
//go:embed format-1.2.sql
var pruneSchema string

// step moves a database from one format to the next, in one transaction.
type step struct {
	from, to string
	what     string
	sql      string
}

// steps is the chain of migrations, oldest first.
var steps = []step{
	{from: "1.0", to: "1.1", what: "added the memory graph's tables", sql: graphSchema},
	{from: "1.1", to: "1.2", what: "added the tables that let the change logs be pruned", sql: pruneSchema},
}

// create makes a fresh database of format Format: the first format's
// schema, then every step.
func create(ctx context.Context, tx pgx.Tx) error {
	if _, err := tx.Exec(ctx, schema); err != nil {
		return fmt.Errorf("create the schema: %w", err)
	}
	for _, s := range plan("1.0") {
		if _, err := tx.Exec(ctx, s.sql); err != nil {
			return fmt.Errorf("create the schema (format %s): %w", s.to, err)
		}
	}
	return nil
}

// guardLock is the advisory lock key under which the marker is checked,
// created or moved: the same number in every hearthd ("hearth" in ASCII).
const guardLock int64 = 0x686561727468

// marker is the database's format row.
type marker struct {
	format, writtenBy, storeID string
}

// readMarker returns the marker, nil when there is no marker table, and
// whether any other hearth table exists (data).
func readMarker(ctx context.Context, tx pgx.Tx) (*marker, []string, error) {
	rows, err := tx.Query(ctx, `SELECT c.relname FROM pg_class c
		WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind IN ('r', 'p', 'S', 'v', 'm')
		  AND c.relname LIKE 'hearth\_%' ORDER BY c.relname`)
	if err != nil {
		return nil, nil, err
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, nil, err
	}
	hasMarker := false
	var data []string
	for _, n := range names {
		if n == "hearth_format" {
			hasMarker = true
		} else {
			data = append(data, n)
		}
	}
	if !hasMarker {
		return nil, data, nil
	}
	var m marker
	err = tx.QueryRow(ctx, `SELECT format, written_by, store_id FROM hearth_format WHERE id = 1`).Scan(&m.format, &m.writtenBy, &m.storeID)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, append(data, "hearth_format (empty)"), nil
	}
	if err != nil {
		return nil, nil, err
	}
	return &m, data, nil
}

// lockedTx runs fn in a transaction holding the guard's advisory lock.
func lockedTx(ctx context.Context, conn interface {
	Begin(context.Context) (pgx.Tx, error)
}, fn func(pgx.Tx) error) error {
	tx, err := conn.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, guardLock); err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

// where names the database for messages, without credentials.
func refuse(reason, where, found, msg string) *store.FormatError {
	return &store.FormatError{Reason: reason, Where: where, Found: found, Want: Format, Message: msg}
}

// checkFormat is the guard on the database: it runs before the store serves
// anything. A fresh database gets the schema and the marker; anything else
// must already be in Format. It returns the store id.
func checkFormat(ctx context.Context, conn interface {
	Begin(context.Context) (pgx.Tx, error)
}, where, build string) (storeID string, created bool, err error) {
	err = lockedTx(ctx, conn, func(tx pgx.Tx) error {
		m, data, err := readMarker(ctx, tx)
		if err != nil {
			return err
		}
		switch {
		case m == nil && len(data) > 0:
			return refuse(store.ReasonNoMarker, where, "", fmt.Sprintf(
				"hearthd will not use the PostgreSQL store %s: it holds hearth tables (%s) but no format marker (hearth_format), so hearthd cannot tell which format they are in. Nothing was changed. "+
					"If they were written by a hearthd of format %s, back them up and mark them with `hearthd migrate --adopt`; otherwise point HEARTH_STORE_URL at another database.",
				where, strings.Join(data, ", "), Format))
		case m == nil:
			storeID, created = uuid.NewString(), true
			if err := create(ctx, tx); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, `INSERT INTO hearth_format (id, format, written_by, store_id) VALUES (1, $1, $2, $3)`, Format, build, storeID)
			return err
		case m.format != Format:
			return refuseMismatch(where, m, build)
		}
		storeID = m.storeID
		return nil
	})
	return storeID, created, err
}

func refuseMismatch(where string, m *marker, build string) *store.FormatError {
	what := fmt.Sprintf("hearthd %s will not use the PostgreSQL store %s: it is in format %s (written by hearthd %s), but this hearthd reads format %s. Nothing was changed.",
		build, where, m.format, m.writtenBy, Format)
	var todo string
	switch {
	case newerFormat(m.format, Format):
		todo = fmt.Sprintf("The database is newer than this hearthd: upgrade hearthd to a release that reads format %s (`hearthd migrate` only converts older data forward).", m.format)
	case plan(m.format) == nil:
		todo = fmt.Sprintf("`hearthd migrate` cannot convert format %s: restore a backup made for format %s, or point HEARTH_STORE_URL at another database.", m.format, Format)
	default:
		todo = "Back it up, then run `hearthd migrate` to convert it explicitly; hearthd never converts data on its own."
	}
	return refuse(store.ReasonFormatMismatch, where, m.format, what+" "+todo)
}

// plan is the chain of steps from format from to Format, nil when there is none.
func plan(from string) []step {
	var out []step
	for at := from; at != Format; {
		found := false
		for _, s := range steps {
			if s.from == at {
				out, at, found = append(out, s), s.to, true
				break
			}
		}
		if !found || len(out) > len(steps) {
			return nil
		}
	}
	if out == nil {
		out = []step{}
	}
	return out
}

// MigrateResult says what Migrate did, for `hearthd migrate` to print.
type MigrateResult struct {
	Where   string
	From    string
	Created bool
	Adopted bool
	Steps   []string
}

func (r MigrateResult) String() string {
	switch {
	case r.Created:
		return fmt.Sprintf("created the hearth tables in the PostgreSQL store %s (format %s)", r.Where, Format)
	case r.Adopted:
		return fmt.Sprintf("adopted the hearth tables in the PostgreSQL store %s as format %s", r.Where, Format)
	case len(r.Steps) == 0:
		return fmt.Sprintf("the PostgreSQL store %s is already in format %s; nothing to do", r.Where, Format)
	}
	return fmt.Sprintf("migrated the PostgreSQL store %s from format %s to %s: %s", r.Where, r.From, Format, strings.Join(r.Steps, "; "))
}

// Migrate is `hearthd migrate` for the database at dsn: it creates the
// tables in a fresh database, moves an older format forward step by step
// (each in one transaction with the marker), and with adopt marks hearth
// tables that have no marker as Format. Refusals are *store.FormatError.
func Migrate(ctx context.Context, dsn, build string, adopt bool) (MigrateResult, error) {
	cfg, where, err := parse(dsn)
	if err != nil {
		return MigrateResult{}, err
	}
	res := MigrateResult{Where: where}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return res, fmt.Errorf("connect to the PostgreSQL store %s: %s", where, clean(err, cfg.Password))
	}
	defer conn.Close(context.Background())
	err = lockedTx(ctx, conn, func(tx pgx.Tx) error {
		m, data, err := readMarker(ctx, tx)
		if err != nil {
			return err
		}
		switch {
		case m == nil && len(data) == 0:
			res.Created = true
			if err := create(ctx, tx); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, `INSERT INTO hearth_format (id, format, written_by, store_id) VALUES (1, $1, $2, $3)`, Format, build, uuid.NewString())
			return err
		case m == nil && !adopt:
			return refuse(store.ReasonNoMarker, where, "", fmt.Sprintf(
				"the PostgreSQL store %s holds hearth tables (%s) but no format marker; nothing was changed. If a hearthd of format %s wrote them, back them up and run `hearthd migrate --adopt`.",
				where, strings.Join(data, ", "), Format))
		case m == nil:
			res.Adopted = true
			if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS hearth_format (
				id smallint PRIMARY KEY CHECK (id = 1), format text NOT NULL, written_by text NOT NULL,
				store_id text NOT NULL, written_at timestamptz NOT NULL DEFAULT now())`); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, `INSERT INTO hearth_format (id, format, written_by, store_id) VALUES (1, $1, $2, $3)
				ON CONFLICT (id) DO UPDATE SET format = excluded.format, written_by = excluded.written_by, written_at = now()`, Format, build, uuid.NewString())
			return err
		}
		res.From = m.format
		if m.format == Format {
			return nil
		}
		todo := plan(m.format)
		if todo == nil {
			return refuseMismatch(where, m, build)
		}
		for _, s := range todo {
			if _, err := tx.Exec(ctx, s.sql); err != nil {
				return fmt.Errorf("migrate from format %s to %s: %w (nothing was changed)", s.from, s.to, err)
			}
			res.Steps = append(res.Steps, fmt.Sprintf("%s -> %s: %s", s.from, s.to, s.what))
		}
		_, err = tx.Exec(ctx, `UPDATE hearth_format SET format = $1, written_by = $2, written_at = now() WHERE id = 1`, Format, build)
		return err
	})
	var refusal *store.FormatError
	if err != nil && !errors.As(err, &refusal) {
		err = fmt.Errorf("migrate the PostgreSQL store %s: %s", where, clean(err, cfg.Password))
	}
	return res, err
}

// Check runs the format guard on the database at dsn, creating the tables in
// a fresh one: hearthd calls it before serving, so a refusal (a
// *store.FormatError) stops the daemon with its exit code. Any other error means
// the check could not run (the server is down, say).
func Check(ctx context.Context, dsn, build string) (created bool, err error) {
	cfg, where, err := parse(dsn)
	if err != nil {
		return false, err
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return false, fmt.Errorf("connect to the PostgreSQL store %s: %s", where, clean(err, cfg.Password))
	}
	defer conn.Close(context.Background())
	_, created, err = checkFormat(ctx, conn, where, build)
	var refusal *store.FormatError
	if err != nil && !errors.As(err, &refusal) {
		err = fmt.Errorf("check the PostgreSQL store %s: %s", where, clean(err, cfg.Password))
	}
	return created, err
}

// newerFormat reports whether format found (MAJOR.MINOR) is newer than want;
// a format that does not parse is not.
func newerFormat(found, want string) bool {
	var fMaj, fMin, wMaj, wMin int
	if n, err := fmt.Sscanf(found, "%d.%d", &fMaj, &fMin); n != 2 || err != nil {
		return false
	}
	fmt.Sscanf(want, "%d.%d", &wMaj, &wMin)
	return fMaj > wMaj || (fMaj == wMaj && fMin > wMin)
}
