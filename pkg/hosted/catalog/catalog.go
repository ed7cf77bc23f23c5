// Package catalog keeps, for each hosted server instance key, what the
// server answered the last time it ran: its initialize result (or a
// 2026-07-28 server's DiscoverResult) and its lists
// (tools, prompts, resources, resource templates, every page), with what
// identifies the server's code, so that a later daemon can answer a client
// from it without starting the server (docs/decisions/0045-hosted-catalog.md).
// Entries are files of their own, private to the user (a 0700 directory,
// 0600 files), each written whole or not at all.
package catalog

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/hearth-mcp/hearth/pkg/atomicfile"
)

// Version is the entry format; an entry of another version is not used.
const Version = 1

// Entry is what hearth knows of one instance's server.
type Entry struct {
	Version  int    `json:"version"`
	Key      string `json:"key"`
	Server   string `json:"server"` // its label, as status shows it
	Name     string `json:"name"`   // its name (config name, or what it runs)
	Identity Identity
	// InitParams are what hearth sent the upstream's initialize with (its
	// clients' shape, docs/decisions/0056-client-shape.md); InitResult its
	// answer.
	InitParams json.RawMessage `json:"initParams"`
	InitResult json.RawMessage `json:"initResult"`
	// Era is the protocol version the upstream answered initialize with,
	// or 2026-07-28 for one that speaks only that (decision 0038).
	Era string `json:"era"`
	// A 2026-07-28 upstream's entry has Discover, its DiscoverResult, in
	// place of InitResult, and the server's own freshness: DiscoverTTLMillis
	// for the DiscoverResult, ListTTLMillis for each list held (a list that
	// was stale at once is not held), ListCaps the client capabilities the
	// lists were fetched with (only a client declaring the same is answered
	// from them). Lists whose cacheScope is "private" are kept too: an
	// entry belongs to one instance key, which hashes the environment (the
	// authorization context of a stdio server), and is answered to no other.
	Discover          json.RawMessage  `json:"discover,omitempty"`
	DiscoverTTLMillis int64            `json:"discoverTtlMs,omitempty"`
	ListTTLMillis     map[string]int64 `json:"listTtlMs,omitempty"`
	ListCaps          json.RawMessage  `json:"listCapabilities,omitempty"`
	// Lists holds each list method's pages, in order.
	Lists map[string][]json.RawMessage `json:"lists"`
	// TTLMillis is the shortest positive ttlMs its lists gave (0: none):
	// the entry is answered from only that long after Recorded.
	TTLMillis int64 `json:"ttlMs,omitempty"`
	// Recorded is when the lists were fetched; LastRan when the upstream
	// last ran (started or stopped).
	Recorded time.Time `json:"recorded"`
	LastRan  time.Time `json:"lastRan"`

	// counts are Counts, taken once when the entry is read or written:
	// status asks for them on every call.
	counts [4]int
}

// Usable reports whether clients may be answered from the entry at now:
// its lists' ttlMs, if any, has not run out.
// a modern upstream's DiscoverResult is fresh (its lists are answered from
// each while it is).
func (e *Entry) Usable(now time.Time) bool {
	if e.Discover != nil {
		return now.Sub(e.Recorded) < time.Duration(e.DiscoverTTLMillis)*time.Millisecond
	}
	return e.TTLMillis <= 0 || now.Sub(e.Recorded) < time.Duration(e.TTLMillis)*time.Millisecond
}

// Counts are how many items each list holds.
func (e *Entry) Counts() (tools, prompts, resources, templates int) {
	return e.counts[0], e.counts[1], e.counts[2], e.counts[3]
}

// count takes the entry's counts from its lists.
func (e *Entry) count() {
	n := func(method, member string) int {
		total := 0
		for _, page := range e.Lists[method] {
			var m map[string][]json.RawMessage
			_ = json.Unmarshal(page, &m)
			total += len(m[member])
		}
		return total
	}
	e.counts = [4]int{n("tools/list", "tools"), n("prompts/list", "prompts"), n("resources/list", "resources"), n("resources/templates/list", "resourceTemplates")}
}

// Store is a directory of entries. The daemon that owns the data directory
// is its only writer, so what it read or wrote is kept in memory and read
// from the disk once: status lists the entries on every call.
type Store struct {
	dir   string
	mu    sync.Mutex        // one writer at a time, so that Touch keeps a newer Save; guards the cache
	cache map[string]*Entry // entries read or written, by key (never changed once cached: replaced)
	whole bool              // the directory has been read whole into cache
}

// Open returns the store in dir (created, 0700, when first written). It
// removes what a writer killed in the middle of a Save left: the temporary
// files atomicfile.Write renames into place (".KEY.json.*"), once they are
// older than any write takes, so a daemon killed while writing does not
// leave them to pile up.
func Open(dir string) *Store {
	sweepTemporaries(dir, time.Now().Add(-time.Minute))
	return &Store{dir: dir}
}

var temporaryPattern = regexp.MustCompile(`^\.[0-9a-f]{4,64}\.json\..+$`)

func sweepTemporaries(dir string, before time.Time) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return // none yet, or unreadable: Load and Save say so
	}
	for _, e := range entries {
		if !e.Type().IsRegular() || !temporaryPattern.MatchString(e.Name()) {
			continue
		}
		if info, err := e.Info(); err == nil && info.ModTime().Before(before) {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}

// Dir is the store's directory.
func (s *Store) Dir() string { return s.dir }

var keyPattern = regexp.MustCompile(`^[0-9a-f]{4,64}$`)

func (s *Store) path(key string) (string, error) {
	if !keyPattern.MatchString(key) {
		return "", fmt.Errorf("catalog: %q is not an instance key", key)
	}
	return filepath.Join(s.dir, key+".json"), nil
}

// Load reads the entry of key; ok is false when there is none usable (no
// file, a file of another version or that does not parse).
func (s *Store) Load(key string) (*Entry, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.load(key)
}

// load is Load with s.mu held. The entry returned is shared: never change it.
func (s *Store) load(key string) (*Entry, bool) {
	if e, ok := s.cache[key]; ok {
		return e, e != nil
	}
	if s.whole || !keyPattern.MatchString(key) {
		return nil, false
	}
	e, ok := s.read(key)
	s.remember(key, e)
	return e, ok
}

func (s *Store) remember(key string, e *Entry) {
	if s.cache == nil {
		s.cache = map[string]*Entry{}
	}
	s.cache[key] = e
}

// read reads the entry of key from its file.
func (s *Store) read(key string) (*Entry, bool) {
	p, err := s.path(key)
	if err != nil {
		return nil, false
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, false
	}
	var e Entry
	if json.Unmarshal(b, &e) != nil || e.Version != Version || e.Key != key || e.InitResult == nil && e.Discover == nil {
		return nil, false
	}
	e.count()
	return &e, true
}

// Save writes an entry, replacing the key's former one atomically.
func (s *Store) Save(e *Entry) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.save(e)
}

func (s *Store) save(e *Entry) error {
	p, err := s.path(e.Key)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return err
	}
	_ = os.Chmod(s.dir, 0o700)
	e.Version = Version
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	if err := atomicfile.Write(p, b, 0o600); err != nil {
		return err
	}
	e.count()
	s.remember(e.Key, e)
	return nil
}

// Touch records that the key's upstream ran at t, when it has an entry.
func (s *Store) Touch(key string, t time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.load(key); ok {
		c := *e // cached entries are shared: a new one replaces it
		c.LastRan = t
		_ = s.save(&c)
	}
}

// Forget removes the key's entry; it reports whether there was one.
func (s *Store) Forget(key string) (bool, error) {
	p, err := s.path(key)
	if err != nil {
		return false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	err = os.Remove(p)
	if errors.Is(err, os.ErrNotExist) {
		s.remember(key, nil)
		return false, nil
	}
	if err == nil {
		s.remember(key, nil)
	}
	return err == nil, err
}

// All reads every usable entry, ordered by server then key.
func (s *Store) All() []*Entry {
	s.mu.Lock()
	if !s.whole {
		names, _ := os.ReadDir(s.dir)
		for _, n := range names {
			if key, ok := strings.CutSuffix(n.Name(), ".json"); ok {
				s.load(key)
			}
		}
		s.whole = true
	}
	var out []*Entry
	for _, e := range s.cache {
		if e != nil {
			out = append(out, e)
		}
	}
	s.mu.Unlock()
	sort.Slice(out, func(i, j int) bool {
		if out[i].Server != out[j].Server {
			return out[i].Server < out[j].Server
		}
		return out[i].Key < out[j].Key
	})
	return out
}
