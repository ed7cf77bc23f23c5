// Package graphwrite is what a memory graph write does, whatever engine
// runs it: which entities, observations and relations to insert, what a
// caller is answered, and the graphindex.Change the engine applies once the
// write commits. An engine supplies only the row operations (Rows), inside
// its own transaction; every engine thus answers a write alike
// (docs/decisions/0018-memory-graph.md).
package graphwrite

import (
	"context"
	"slices"
	"time"

	"github.com/hearth-mcp/hearth/pkg/memory/graphindex"
	"github.com/hearth-mcp/hearth/pkg/memory/store"
)

// Rows are an engine's row operations inside one write transaction.
type Rows interface {
	// EntityKeys maps each existing entity of names in ws to its key.
	EntityKeys(ctx context.Context, ws string, names []string) (map[string]int64, error)
	// InsertEntities inserts the entities of es that ws does not have yet
	// (without their observations) and returns the rows created, by name.
	InsertEntities(ctx context.Context, ws string, es []store.Entity) (map[string]graphindex.EntityRow, error)
	// InsertObservations inserts the observations an entity does not have
	// yet and returns those inserted.
	InsertObservations(ctx context.Context, obs []graphindex.ObservationRow) ([]graphindex.ObservationRow, error)
	// InsertRelations inserts the relations ws does not have yet and
	// returns those inserted.
	InsertRelations(ctx context.Context, ws string, rs []store.Relation) ([]graphindex.RelationRow, error)
	// DeleteEntities deletes the relations of ws naming any of names (as
	// source or target), then those entities with their observations and
	// links, and returns the keys of both.
	DeleteEntities(ctx context.Context, ws string, names []string) (relations, entities []int64, err error)
	// DeleteObservations deletes the observations of obs (entity key and
	// text) that exist and returns them (entity and key).
	DeleteObservations(ctx context.Context, obs []graphindex.ObservationRow) ([]graphindex.ObservationRow, error)
	// DeleteRelations deletes the relations of rs that ws has and returns
	// their keys.
	DeleteRelations(ctx context.Context, ws string, rs []store.Relation) ([]int64, error)
	// Memory finds a memory by id, its key and workspace, and keeps a
	// delete of it from committing before this transaction does; found is
	// false when it is gone.
	Memory(ctx context.Context, id string) (key int64, ws string, found bool, err error)
	// Link links the entities (keys) to the memory and counts the links
	// that are new.
	Link(ctx context.Context, memory int64, entities []int64) (int64, error)
	// MarkExtracted records that extractor read the memory, at (Unix ms).
	MarkExtracted(ctx context.Context, memory int64, extractor string, at int64) error
}

// CreateEntities creates the entities of es (already unique) that ws does
// not have, with their observations, and returns those created.
func CreateEntities(ctx context.Context, r Rows, ws string, es []store.Entity) ([]store.Entity, *graphindex.Change, error) {
	created, err := r.InsertEntities(ctx, ws, es)
	if err != nil {
		return nil, nil, err
	}
	c := &graphindex.Change{Workspace: ws}
	var out []store.Entity
	var obs []graphindex.ObservationRow
	for _, e := range es {
		row, ok := created[e.Name]
		if !ok {
			continue
		}
		c.NewEntities = append(c.NewEntities, row)
		for _, o := range e.Observations {
			obs = append(obs, graphindex.ObservationRow{Entity: row.Key, Text: o})
		}
		out = append(out, e)
	}
	if c.NewObservations, err = r.InsertObservations(ctx, obs); err != nil {
		return nil, nil, err
	}
	return out, c, nil
}

// CreateRelations creates the relations of rs (already unique) that ws
// does not have and returns those created, in rs's order.
func CreateRelations(ctx context.Context, r Rows, ws string, rs []store.Relation) ([]store.Relation, *graphindex.Change, error) {
	created, err := r.InsertRelations(ctx, ws, rs)
	if err != nil {
		return nil, nil, err
	}
	isNew := make(map[store.Relation]bool, len(created))
	for _, c := range created {
		isNew[store.Relation{From: c.From, To: c.To, Type: c.Type}] = true
	}
	var out []store.Relation
	for _, rel := range rs {
		if isNew[rel] {
			out = append(out, rel)
		}
	}
	return out, &graphindex.Change{Workspace: ws, NewRelations: created}, nil
}

// AddObservations adds each entity's new observations; an entity ws does
// not have fails the whole write with a *store.MissingEntityError.
func AddObservations(ctx context.Context, r Rows, ws string, adds []store.ObservationAdd) ([]store.ObservationsAdded, *graphindex.Change, error) {
	names := make([]string, len(adds))
	for i, a := range adds {
		names[i] = a.Entity
	}
	keys, err := r.EntityKeys(ctx, ws, store.UniqueStrings(names))
	if err != nil {
		return nil, nil, err
	}
	for _, a := range adds {
		if _, ok := keys[a.Entity]; !ok {
			return nil, nil, &store.MissingEntityError{Name: a.Entity}
		}
	}
	c := &graphindex.Change{Workspace: ws}
	var out []store.ObservationsAdded
	for _, a := range adds {
		contents := store.UniqueStrings(a.Contents)
		obs := make([]graphindex.ObservationRow, len(contents))
		for i, text := range contents {
			obs[i] = graphindex.ObservationRow{Entity: keys[a.Entity], Text: text}
		}
		added, err := r.InsertObservations(ctx, obs)
		if err != nil {
			return nil, nil, err
		}
		c.NewObservations = append(c.NewObservations, added...)
		isNew := make(map[string]bool, len(added))
		for _, o := range added {
			isNew[o.Text] = true
		}
		res := store.ObservationsAdded{Entity: a.Entity, Added: []string{}}
		for _, text := range contents {
			if isNew[text] {
				res.Added = append(res.Added, text)
			}
		}
		out = append(out, res)
	}
	return out, c, nil
}

// Merge adds es's entities (observations added to existing ones) and rs's
// relations to ws, both already unique (an import, an extraction), and
// says what it changed.
func Merge(ctx context.Context, r Rows, ws string, es []store.Entity, rs []store.Relation) (*graphindex.Change, store.ImportResult, error) {
	var res store.ImportResult
	c := &graphindex.Change{Workspace: ws}
	created, err := r.InsertEntities(ctx, ws, es)
	if err != nil {
		return nil, res, err
	}
	for _, e := range es {
		if row, ok := created[e.Name]; ok {
			c.NewEntities = append(c.NewEntities, row)
		}
	}
	res.EntitiesCreated = len(c.NewEntities)
	var obs []graphindex.ObservationRow
	if slices.ContainsFunc(es, func(e store.Entity) bool { return len(e.Observations) > 0 }) {
		names := make([]string, 0, len(es))
		for _, e := range es {
			if _, ok := created[e.Name]; !ok && len(e.Observations) > 0 {
				names = append(names, e.Name)
			}
		}
		keys, err := r.EntityKeys(ctx, ws, names)
		if err != nil {
			return nil, res, err
		}
		for name, row := range created {
			keys[name] = row.Key
		}
		for _, e := range es {
			for _, o := range e.Observations {
				obs = append(obs, graphindex.ObservationRow{Entity: keys[e.Name], Text: o})
			}
		}
	}
	if c.NewObservations, err = r.InsertObservations(ctx, obs); err != nil {
		return nil, res, err
	}
	res.ObservationsAdded = len(c.NewObservations)
	if c.NewRelations, err = r.InsertRelations(ctx, ws, rs); err != nil {
		return nil, res, err
	}
	res.RelationsCreated = len(c.NewRelations)
	return c, res, nil
}

// DeleteEntities removes the entities of names (already unique) from ws,
// with the relations naming them, their observations and their links.
func DeleteEntities(ctx context.Context, r Rows, ws string, names []string) (*graphindex.Change, error) {
	c := &graphindex.Change{Workspace: ws}
	var err error
	if c.GoneRelations, c.GoneEntities, err = r.DeleteEntities(ctx, ws, names); err != nil {
		return nil, err
	}
	return c, nil
}

// DeleteObservations removes observations of ws's entities; those of an
// entity ws does not have are ignored.
func DeleteObservations(ctx context.Context, r Rows, ws string, dels []store.ObservationDelete) (*graphindex.Change, error) {
	names := make([]string, len(dels))
	for i, d := range dels {
		names[i] = d.Entity
	}
	keys, err := r.EntityKeys(ctx, ws, store.UniqueStrings(names))
	if err != nil {
		return nil, err
	}
	var obs []graphindex.ObservationRow
	for _, d := range dels {
		if key, ok := keys[d.Entity]; ok {
			for _, text := range store.UniqueStrings(d.Observations) {
				obs = append(obs, graphindex.ObservationRow{Entity: key, Text: text})
			}
		}
	}
	c := &graphindex.Change{Workspace: ws}
	if len(obs) == 0 {
		return c, nil
	}
	if c.GoneObservations, err = r.DeleteObservations(ctx, obs); err != nil {
		return nil, err
	}
	return c, nil
}

// DeleteRelations removes the relations of rs (already unique) from ws.
func DeleteRelations(ctx context.Context, r Rows, ws string, rs []store.Relation) (*graphindex.Change, error) {
	gone, err := r.DeleteRelations(ctx, ws, rs)
	if err != nil {
		return nil, err
	}
	return &graphindex.Change{Workspace: ws, GoneRelations: gone}, nil
}

// ApplyExtractions writes what the extractor found, memory by memory: the
// entities and relations merged into the memory's workspace, the memory
// linked to its entities and marked as read. A memory deleted since it was
// read is passed over.
func ApplyExtractions(ctx context.Context, r Rows, xs []store.Extraction) ([]*graphindex.Change, store.BuildRecord, error) {
	var rec store.BuildRecord
	var changes []*graphindex.Change
	now := time.Now().UnixMilli()
	for _, x := range xs {
		mem, ws, found, err := r.Memory(ctx, x.MemoryID)
		if err != nil {
			return nil, rec, err
		}
		if !found {
			continue // deleted since it was read
		}
		es := store.UniqueEntities(x.Entities, true)
		c, res, err := Merge(ctx, r, ws, es, store.UniqueRelations(x.Relations))
		if err != nil {
			return nil, rec, err
		}
		changes = append(changes, c)
		rec.EntitiesCreated += int64(res.EntitiesCreated)
		rec.RelationsCreated += int64(res.RelationsCreated)
		if len(es) > 0 {
			names := make([]string, len(es))
			for i, e := range es {
				names[i] = e.Name
			}
			keys, err := r.EntityKeys(ctx, ws, names)
			if err != nil {
				return nil, rec, err
			}
			ents := make([]int64, 0, len(keys))
			for _, name := range names {
				ents = append(ents, keys[name])
			}
			n, err := r.Link(ctx, mem, ents)
			if err != nil {
				return nil, rec, err
			}
			rec.Links += n
		}
		if err := r.MarkExtracted(ctx, mem, x.Extractor, now); err != nil {
			return nil, rec, err
		}
		rec.Memories++
	}
	return changes, rec, nil
}
