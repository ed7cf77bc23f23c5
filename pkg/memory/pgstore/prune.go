package pgstore

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"go.uber.org/zap"
)

// The change logs (hearth_changes, hearth_graph_changes) are pruned of what
// every live daemon has applied (docs/decisions/0022-pruned-change-logs.md).
// Every Options.Prune each daemon reports in hearth_daemons the last change
// of each log it applied, forgets the daemons that have not reported within
// Options.Lease, and deletes the changes before the oldest place reported,
// noting in hearth_pruned up to where. The change at that place stays: a
// snapshot stamped with it is still trusted, and the log still names its
// last change. A daemon that finds its next change pruned (it was down, or
// could not report, for longer than the lease) rebuilds its index or graph
// from the tables, as at its first start.

const (
	// defaultPrune is how often a daemon reports its place and prunes.
	defaultPrune = time.Minute
	// defaultLease is how long a report holds the logs back: a daemon gone
	// for longer has its place forgotten, and rebuilds when it returns.
	defaultLease = 10 * time.Minute
)

// errPruned: the log no longer has the change after the one applied.
var errPruned = errors.New("the change log was pruned past this daemon's place")

// keeper prunes the logs (reporting this daemon's place), every
// Options.Prune from when the index and graph are loaded (load reported
// the place first) until the store closes.
func (s *Store) keeper() {
	defer s.stopped.Done()
	if !s.AwaitLoaded() {
		return
	}
	t := time.NewTicker(s.opts.Prune)
	defer t.Stop()
	for {
		select {
		case <-t.C:
		case <-s.Closing:
			return
		}
		ctx, cancel := bounded(context.Background())
		if err := s.prune(ctx); err != nil {
			s.Log.Warn("memory: pruning the change logs failed; will retry", zap.Error(s.fail(ctx, "prune", err)))
		}
		cancel()
	}
}

// reportPlace records where this daemon is in both logs, so that no
// pruning passes it while it lives: once loaded, before it serves (a
// daemon that started from a snapshot is behind the others), in one
// statement on the connection loading used. Pruning reports it again.
func (s *Store) reportPlace(ctx context.Context) error {
	_, err := s.pool.Exec(ctx, upsertPlace, s.daemon, s.Applied, s.gApplied)
	return err
}

// upsertPlace records a daemon's place in both logs.
const upsertPlace = `INSERT INTO hearth_daemons (id, applied, graph_applied, seen) VALUES ($1, $2, $3, now())
	ON CONFLICT (id) DO UPDATE SET applied = excluded.applied, graph_applied = excluded.graph_applied, seen = excluded.seen`

// prune reports where this daemon is in both logs and deletes, in one
// transaction, the changes every daemon reported within the lease has
// applied. The pruned row is locked first: one daemon prunes at a time.
func (s *Store) prune(ctx context.Context) error {
	s.Indexing.Lock()
	applied := s.Applied
	s.Indexing.Unlock()
	s.graphing.Lock()
	gApplied := s.gApplied
	s.graphing.Unlock()
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var pruned, gPruned int64
		if err := tx.QueryRow(ctx, `SELECT changes, graph_changes FROM hearth_pruned WHERE id = 1 FOR UPDATE`).Scan(&pruned, &gPruned); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, upsertPlace, s.daemon, applied, gApplied); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM hearth_daemons WHERE seen < now() - $1 * interval '1 millisecond'`, s.opts.Lease.Milliseconds()); err != nil {
			return err
		}
		var floor, gFloor int64
		if err := tx.QueryRow(ctx, `SELECT min(applied), min(graph_applied) FROM hearth_daemons`).Scan(&floor, &gFloor); err != nil {
			return err
		}
		if floor-1 <= pruned && gFloor-1 <= gPruned {
			return nil
		}
		if floor-1 > pruned {
			if _, err := tx.Exec(ctx, `DELETE FROM hearth_changes WHERE seq < $1`, floor); err != nil {
				return err
			}
			pruned = floor - 1
		}
		if gFloor-1 > gPruned {
			if _, err := tx.Exec(ctx, `DELETE FROM hearth_graph_changes WHERE seq < $1`, gFloor); err != nil {
				return err
			}
			gPruned = gFloor - 1
		}
		_, err := tx.Exec(ctx, `UPDATE hearth_pruned SET changes = $1, graph_changes = $2 WHERE id = 1`, pruned, gPruned)
		return err
	})
}
