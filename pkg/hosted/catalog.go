package hosted

import (
	"encoding/json"
	"time"

	"go.uber.org/zap"

	"github.com/hearth-mcp/hearth/pkg/hosted/catalog"
	"github.com/hearth-mcp/hearth/pkg/hosted/route"
)

// The catalog (docs/decisions/0045-hosted-catalog.md): what each shared
// instance's server answered the last time it ran, kept in the state
// directory so that a client attaching to a stopped server is answered at
// once, and the server starts only for a request that needs it.

// catalogued reports whether the instance may use the catalog: a shared
// one (a client instance's initialize is its client's own) whose config
// does not turn it off.
func (in *Instance) catalogued() bool {
	return in.t.cat != nil && in.spec.Sharing != PerClient && !in.spec.NoCatalog
}

// fromCatalog seeds a new instance's router with its catalog entry when the
// entry is current: the server's code is what it was (Identity) and the
// server did not call its lists stale. A prestart server is started too.
// Called as the instance is created, before any client's frame.
func (in *Instance) fromCatalog() {
	if in.catalogued() {
		e, why := in.t.cat.Lookup(in.key)
		if why != nil {
			in.t.log.Warn("hosted server's catalog entry is not answered from; the server starts for its clients", zap.String("server", in.spec.Label()), zap.String("key", in.key), zap.Error(why))
		}
		if e != nil {
			now := in.identify()
			switch {
			case !e.Identity.Same(now):
				in.t.log.Info("hosted server's catalog entry is stale: its code changed", zap.String("server", in.spec.Label()), zap.String("key", in.key))
			case !e.Usable(time.Now()):
				in.t.log.Info("hosted server's catalog entry is not answered from: its lists are older than their ttlMs", zap.String("server", in.spec.Label()), zap.String("key", in.key))
			default:
				seeded := in.r.Seed(seedOf(e))
				if seeded && e.Discover != nil && in.spec.Sharing != PerClient {
					in.mu.Lock()
					in.modern = true
					in.mu.Unlock()
					in.t.speaksModern(in)
				}
				in.t.log.Info("hosted server answered from its catalog until a request needs it", zap.String("server", in.spec.Label()), zap.String("key", in.key), zap.Bool("seeded", seeded))
			}
		}
	}
	if in.spec.Prestart {
		go in.start()
	}
}

// checkEntry judges an entry read from disk as the router judges what an
// upstream sends (route.CheckCatalog): what it would refuse live is not
// answered from disk either.
func checkEntry(e *catalog.Entry) error { return route.CheckCatalog(seedOf(e)) }

// seedOf is what a router is seeded with from an entry.
func seedOf(e *catalog.Entry) route.Catalog {
	cat := route.Catalog{InitParams: e.InitParams, InitResult: e.InitResult, Lists: e.Lists}
	if e.Discover != nil {
		cat.InitResult = nil
		cat.Discover, cat.ListCaps, cat.Fetched = e.Discover, e.ListCaps, e.Recorded
		cat.DiscoverTTL = time.Duration(e.DiscoverTTLMillis) * time.Millisecond
		cat.ListTTL = map[string]time.Duration{}
		for m, ms := range e.ListTTLMillis {
			cat.ListTTL[m] = time.Duration(ms) * time.Millisecond
		}
	}
	return cat
}

// recordCatalog saves what a started upstream listed (the router calls it
// with its lock held: the write happens elsewhere).
func (in *Instance) recordCatalog(cat route.Catalog) {
	if !in.catalogued() {
		return
	}
	in.mu.Lock()
	id := in.identity
	in.mu.Unlock()
	var init struct {
		ProtocolVersion string `json:"protocolVersion"`
		ServerInfo      struct {
			Version string `json:"version"`
		} `json:"serverInfo"`
	}
	_ = json.Unmarshal(cat.InitResult, &init)
	id.Resolved = init.ServerInfo.Version
	now := time.Now().UTC()
	e := &catalog.Entry{
		Key: in.key, Server: in.spec.Label(), Name: in.spec.ServerName(), Identity: id,
		InitParams: cat.InitParams, InitResult: cat.InitResult, Era: init.ProtocolVersion,
		Lists: cat.Lists, TTLMillis: cat.TTL.Milliseconds(),
		Recorded: now, LastRan: now,
	}
	if cat.Discover != nil {
		// A 2026-07-28 server: its version is in the DiscoverResult's _meta,
		// its freshness counted from when the router fetched the lists.
		var d struct {
			Meta struct {
				ServerInfo struct {
					Version string `json:"version"`
				} `json:"io.modelcontextprotocol/serverInfo"`
			} `json:"_meta"`
		}
		_ = json.Unmarshal(cat.Discover, &d)
		e.Identity.Resolved = d.Meta.ServerInfo.Version
		e.Era, e.Discover, e.ListCaps = "2026-07-28", cat.Discover, cat.ListCaps
		e.Recorded, e.LastRan = cat.Fetched.UTC(), cat.Fetched.UTC()
		e.DiscoverTTLMillis = cat.DiscoverTTL.Milliseconds()
		e.ListTTLMillis = map[string]int64{}
		for m, ttl := range cat.ListTTL {
			e.ListTTLMillis[m] = ttl.Milliseconds()
		}
	}
	go func() {
		if err := in.t.cat.Save(e); err != nil {
			in.t.log.Warn("could not save a hosted server's catalog entry", zap.String("server", in.spec.Label()), zap.Error(err))
		}
	}()
}
