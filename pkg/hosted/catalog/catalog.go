// Package catalog keeps, for each hosted server instance key, what the
// server answered the last time it ran: its initialize result (or a
// 2026-07-28 server's DiscoverResult) and its lists
// (tools, prompts, resources, resource templates, every page), with what
// identifies the server's code, so that a later daemon can answer a client
// from it without starting the server (docs/decisions/0045-hosted-catalog.md).
// Entries are files of their own, private to the user (a 0700 directory,
// 0600 files), each written whole or not at all, and read by the rule for
// hearth's own files (pkg/safefile) and judged as the live path judges an
// upstream's answers (the Store's Check) before anything is answered from
// them.
package catalog

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/hearth-mcp/hearth/pkg/atomicfile"
	"github.com/hearth-mcp/hearth/pkg/safefile"
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

// MaxEntry bounds one entry's file: an entry is every page of four lists
// (at most 100 pages each), and the largest servers' tools lists are a
// few hundred kilobytes, so 8 MiB is room for far more than any real
// server lists while a file that is no entry (a device behind a link, a
// file grown to gigabytes) is refused before it is read. An entry that
// would be larger is not written: that server is not catalogued and its
// clients wait for its start.
const MaxEntry = 8 << 20

// Check judges a parsed entry as the live path judges what an upstream
// sends (the hosted package's check is the router's, route.CheckCatalog);
// an entry it refuses is not answered from.
type Check func(*Entry) error

// Store is a directory of entries. The daemon that owns the data directory
// is its only writer, so what it read or wrote is kept in memory and read
// from the disk once: status lists the entries on every call. No file is
// read while the store's lock is held, so a slow disk delays only the
// client whose entry it is.
type Store struct {
	dir   string
	check Check
	mu    sync.Mutex        // one writer at a time, so that Touch keeps a newer Save; guards the cache
	cache map[string]*Entry // entries read or written, by key (never changed once cached: replaced)
	why   map[string]error  // why a key's file was not used, when it was read and refused
	whole bool              // the directory has been read whole into cache
}

// Open returns the store in dir (created, 0700, when first written). It
// removes what a writer killed in the middle of a Save left: the temporary
// files atomicfile.Write renames into place (".KEY.json.*"), once they are
// older than any write takes, so a daemon killed while writing does not
// leave them to pile up. check, when set, judges each entry read.
func Open(dir string, check Check) *Store {
	sweepTemporaries(dir, time.Now().Add(-time.Minute))
	return &Store{dir: dir, check: check}
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
// file, or one Lookup refuses).
func (s *Store) Load(key string) (*Entry, bool) {
	e, _ := s.Lookup(key)
	return e, e != nil
}

// Lookup reads the entry of key: nil and no error when there is none, nil
// and why when its file is not one to answer from (not hearth's own file,
// over MaxEntry, not valid UTF-8 or JSON, of another version or key, or
// refused by the store's check). The entry returned is shared: never
// change it.
func (s *Store) Lookup(key string) (*Entry, error) {
	s.mu.Lock()
	if e, ok := s.cache[key]; ok {
		why := s.why[key]
		s.mu.Unlock()
		return e, why
	}
	if s.whole || !keyPattern.MatchString(key) {
		s.mu.Unlock()
		return nil, nil
	}
	s.mu.Unlock()
	e, why := s.read(key) // outside the lock
	s.mu.Lock()
	defer s.mu.Unlock()
	if cur, ok := s.cache[key]; ok {
		// Saved, forgotten or read by another meanwhile: that stands.
		return cur, s.why[key]
	}
	s.remember(key, e, why)
	return e, why
}

func (s *Store) remember(key string, e *Entry, why error) {
	if s.cache == nil {
		s.cache, s.why = map[string]*Entry{}, map[string]error{}
	}
	s.cache[key] = e
	if why != nil {
		s.why[key] = why
	} else {
		delete(s.why, key)
	}
}

// readFile reads an entry's file (a test's hook: defaultRead).
var readFile, defaultRead = safefile.ReadOwn, safefile.ReadOwn

// read reads the entry of key from its file, a file of hearth's own
// (safefile.ReadOwn: no link followed, no FIFO waited on, another user's
// refused, at most MaxEntry bytes), and checks it.
func (s *Store) read(key string) (*Entry, error) {
	p, err := s.path(key)
	if err != nil {
		return nil, err
	}
	b, err := readFile(p, MaxEntry)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if !utf8.Valid(b) {
		return nil, fmt.Errorf("%s is not valid UTF-8", p)
	}
	var e Entry
	if err := json.Unmarshal(b, &e); err != nil {
		return nil, fmt.Errorf("%s: %v", p, err)
	}
	switch {
	case e.Version != Version:
		return nil, fmt.Errorf("%s is of format %d, not %d", p, e.Version, Version)
	case e.Key != key:
		return nil, fmt.Errorf("%s names another key", p)
	case e.InitResult == nil && e.Discover == nil:
		return nil, fmt.Errorf("%s holds no initialize result", p)
	}
	if s.check != nil {
		if err := s.check(&e); err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
	}
	e.count()
	return &e, nil
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
	if err := safefile.OwnDir(s.dir); err != nil {
		return err
	}
	e.Version = Version
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	if len(b) > MaxEntry {
		return fmt.Errorf("its entry would be %d bytes, more than the catalog's %d: not catalogued", len(b), MaxEntry)
	}
	if err := atomicfile.Write(p, b, 0o600); err != nil {
		return err
	}
	e.count()
	s.remember(e.Key, e, nil)
	return nil
}

// Touch records that the key's upstream ran at t, when it has an entry.
func (s *Store) Touch(key string, t time.Time) {
	if e, _ := s.Lookup(key); e == nil { // read, if it must be, outside the lock
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if e := s.cache[key]; e != nil { // the latest: a Save meanwhile stands
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
		s.remember(key, nil, nil)
		return false, nil
	}
	if err == nil {
		s.remember(key, nil, nil)
	}
	return err == nil, err
}

// All reads every usable entry, ordered by server then key.
func (s *Store) All() []*Entry {
	s.mu.Lock()
	whole := s.whole
	s.mu.Unlock()
	if !whole {
		// Each file read outside the lock (Lookup), then the directory
		// counts as read.
		names, _ := os.ReadDir(s.dir)
		for _, n := range names {
			if key, ok := strings.CutSuffix(n.Name(), ".json"); ok {
				s.Lookup(key)
			}
		}
		s.mu.Lock()
		s.whole = true
		s.mu.Unlock()
	}
	s.mu.Lock()
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
