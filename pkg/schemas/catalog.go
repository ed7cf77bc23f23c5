// Package schemas is the schema family: a catalog of JSON Schemas and
// examples loaded once from the schema roots (a directory, or the embedded
// synesthetic-schemas catalog when none is configured), compiled with
// pkg/validate and kept warm for every client, plus the tools that list,
// read, validate, diff and persist assets.
//
// $ref resolves only inside the roots: by a loaded schema's $id, by file path
// under the schemas root, or through an explicit URL-prefix-to-directory map.
// Nothing is ever fetched over the network.
//
// A root is a real tree: several schemas may share a name (v1/asset.json and
// v2/asset.json), a client names one by its name when that is unambiguous,
// else by name@version or by its path (see Catalog.Resolve). One file that
// does not load is reported and left out; the rest of the catalog serves.
package schemas

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/hearth-mcp/hearth/pkg/jsonval"
	"github.com/hearth-mcp/hearth/pkg/safefile"
	"github.com/hearth-mcp/hearth/pkg/validate"
)

// Alias is the schema alias clients rely on: nested assets validate against the
// canonical synesthetic-asset schema, ignoring a top-level $schemaRef.
const (
	AliasNested    = "nested-synesthetic-asset"
	AliasCanonical = "synesthetic-asset"
)

// Schema is one loaded schema.
type Schema struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	Path    string `json:"path"` // relative to the schemas root, '/'-separated
	ID      string `json:"-"`
	raw     []byte
	doc     any
	sch     *validate.Schema
}

// Example is one example document.
type Example struct {
	Component string `json:"component"`
	Path      string `json:"path"` // relative to the examples root, '/'-separated
	schemaRef string
}

// Catalog is an immutable, compiled set of schemas and examples.
type Catalog struct {
	// SchemasDir and ExamplesDir are the roots' absolute directories: ""
	// when a root is embedded or there is none.
	SchemasDir, ExamplesDir string
	// Origin says where the schemas came from (the schema Root's Origin).
	Origin         string
	examplesOrigin string
	schemaRoot     root
	exampleRoot    root
	schemas        []*Schema // sorted by name, version, path
	byName         map[string][]*Schema
	byRef          map[string]*Schema // $id, file URL, relative path
	examples       []Example          // sorted by component, path
	// problems are the schema files that did not load, sorted by path.
	problems []Problem
	// examplesErr is why the examples root did not load (nil: it did, or
	// there is none); the schemas serve regardless.
	examplesErr error
}

// Problem is a schema file, or a directory of the schema root, that did not
// load: it is left out of the catalog and reported.
type Problem struct {
	Path  string `json:"path"`
	Error string `json:"error"`
}

// Options tune loading.
type Options struct {
	// BaseURL is the URL the schemas root is published under: a schema at
	// path p is also known as BaseURL+p, and a $ref to BaseURL+p resolves
	// to the file p inside the root (for trees whose schemas refer to each
	// other by their published URLs, with or without an $id of their own).
	// It must be an absolute URL ending in "/"; empty means none.
	BaseURL string
	// URLMap serves URL prefixes from local directories (for $refs to
	// documents identified by URL that carry no $id of their own, such as
	// the official test suite's http://localhost:1234/ remotes).
	URLMap map[string]string
}

// Root is where schemas or examples are read from: a directory, or an
// fs.FS such as the embedded catalog. The zero Root is none.
type Root struct {
	// Dir is a directory on disk.
	Dir string
	// FS, when set, is read instead of a directory.
	FS fs.FS
	// Origin names the root in messages: the embedded catalog's name, or the
	// directory and what chose it. Empty: the directory itself.
	Origin string
}

// DirRoot is the directory dir, or none for "".
func DirRoot(dir string) Root { return Root{Dir: dir} }

// root is an opened Root: one fs.FS the loader reads, whatever backs it.
type root struct {
	fsys fs.FS  // nil: none
	dir  string // the absolute directory behind fsys; "" when embedded
	// urlPath is the path under which the root's files get file URLs (the
	// compiler identifies schemas by URL): dir, or a fixed path for an
	// embedded root, never read from disk.
	urlPath string
}

func (r root) embedded() bool { return r.fsys != nil && r.dir == "" }

// readFile reads the file rel ('/'-separated) of the root: from the fs.FS of
// an embedded root, else inside the directory through safefile, so that a
// FIFO, a socket or a device put there is refused instead of blocking the
// load, and nothing outside the directory is read.
func (r root) readFile(rel string) ([]byte, error) {
	if r.dir == "" {
		return fs.ReadFile(r.fsys, rel)
	}
	return safefile.ReadFileAt(r.dir, filepath.FromSlash(rel))
}

func openRoot(r Root, embeddedPath string) (root, string, error) {
	switch {
	case r.FS != nil:
		origin := r.Origin
		if origin == "" {
			origin = "an embedded catalog"
		}
		return root{fsys: r.FS, urlPath: embeddedPath}, origin, nil
	case r.Dir != "":
		abs, err := filepath.Abs(r.Dir)
		if err != nil {
			return root{}, "", err
		}
		origin := abs
		if r.Origin != "" {
			origin = r.Origin
		}
		return root{fsys: os.DirFS(abs), dir: abs, urlPath: filepath.ToSlash(abs)}, origin, nil
	}
	return root{}, "", nil
}

var versionSegment = regexp.MustCompile(`^v?\d+(\.\d+)*$`)

// Load reads and compiles every *.json under schemasDir and lists the
// examples under examplesDir. An empty dir means none. Only a schema root
// that cannot be read at all fails the load; a schema file that does not
// read, parse or compile is left out and listed by Problems, and an
// examples root that does not load is reported by ExamplesError.
func Load(schemasDir, examplesDir string, opts Options) (*Catalog, error) {
	return LoadRoots(DirRoot(schemasDir), DirRoot(examplesDir), opts)
}

// LoadRoots is Load for roots that may be directories or an fs.FS (the
// embedded catalog): both kinds go through the same loader.
func LoadRoots(schemas, examples Root, opts Options) (*Catalog, error) {
	c := &Catalog{byName: map[string][]*Schema{}, byRef: map[string]*Schema{}}
	var err error
	if c.schemaRoot, c.Origin, err = openRoot(schemas, "/hearth-embedded/jsonschema"); err != nil {
		return nil, err
	}
	if c.exampleRoot, c.examplesOrigin, err = openRoot(examples, "/hearth-embedded/examples"); err != nil {
		return nil, err
	}
	c.SchemasDir, c.ExamplesDir = c.schemaRoot.dir, c.exampleRoot.dir
	if c.schemaRoot.fsys != nil {
		if err := c.loadSchemas(opts); err != nil {
			return nil, err
		}
	}
	if c.exampleRoot.fsys != nil {
		c.examplesErr = c.loadExamples()
	}
	return c, nil
}

// Problems lists the schema files that did not load, sorted by path.
func (c *Catalog) Problems() []Problem { return c.problems }

// ExamplesError is why the examples root did not load, or nil.
func (c *Catalog) ExamplesError() error { return c.examplesErr }

// jsonFiles lists the regular *.json files under a root ('/'-separated,
// sorted). Symbolic links are not followed; special files are left out. A
// directory inside the root that cannot be read is a problem, not a failure;
// the root itself unreadable is the error.
func jsonFiles(fsys fs.FS) ([]string, []Problem, error) {
	var out []string
	var problems []Problem
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == "." {
				return unwrapPath(err)
			}
			problems = append(problems, Problem{Path: p, Error: "cannot read: " + pathless(err).Error()})
			return nil
		}
		if !d.IsDir() && strings.HasSuffix(d.Name(), ".json") && d.Type().IsRegular() {
			out = append(out, p)
		}
		return nil
	})
	sort.Strings(out)
	return out, problems, err
}

// unwrapPath drops a *PathError's path, which names a file inside the root
// relative to it ("." for the root itself): the caller names the root.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) && (pe.Path == "." || !filepath.IsAbs(pe.Path)) {
		if pe.Path == "." {
			return pe.Err
		}
		return fmt.Errorf("%s: %w", pe.Path, pe.Err)
	}
	return err
}

// pathless is err without the path a *PathError names: the caller names it.
func pathless(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func schemaName(rel string) string {
	base := filepath.Base(rel)
	base = strings.TrimSuffix(base, ".json")
	return strings.TrimSuffix(base, ".schema")
}

// fileURL is the URL a root's file is known by.
func (r root) fileURL(rel string) string {
	return (&url.URL{Scheme: "file", Path: path.Join(r.urlPath, rel)}).String()
}

func (c *Catalog) loadSchemas(opts Options) error {
	r := c.schemaRoot
	files, problems, err := jsonFiles(r.fsys)
	if err != nil {
		return fmt.Errorf("read schemas in %s: %w", c.Origin, err)
	}
	c.problems = problems
	fail := func(rel, format string, args ...any) {
		c.problems = append(c.problems, Problem{Path: rel, Error: fmt.Sprintf(format, args...)})
	}
	if err := checkBaseURL(opts.BaseURL); err != nil {
		return err
	}
	comp := validate.NewCompiler(&rootLoader{catalog: c, urlMap: opts.URLMap, baseURL: opts.BaseURL})
	var loaded []*Schema
	firstWithID := map[string]string{}
	for _, rel := range files {
		raw, err := r.readFile(rel)
		if err != nil {
			fail(rel, "cannot read: %v", pathless(err))
			continue
		}
		doc, err := validate.UnmarshalJSON(bytes.NewReader(raw))
		if err != nil {
			fail(rel, "not JSON: %v", err)
			continue
		}
		s := &Schema{Name: schemaName(rel), Path: rel, raw: raw, doc: doc, Version: versionOf(rel, doc)}
		if m, ok := doc.(map[string]any); ok {
			s.ID, _ = m["$id"].(string)
		}
		if s.ID != "" {
			// Two documents claiming one $id would make every $ref to it
			// mean whichever the compiler met first: the first file in
			// path order keeps the $id, the other is left out.
			if first, dup := firstWithID[s.ID]; dup {
				fail(rel, "has the same $id %q as %s", s.ID, first)
				continue
			}
			firstWithID[s.ID] = rel
		}
		if err := comp.AddResource(r.fileURL(rel), doc); err != nil {
			fail(rel, "%v", err)
			continue
		}
		c.byRef[rel] = s
		c.byRef[r.fileURL(rel)] = s
		if opts.BaseURL != "" {
			c.byRef[opts.BaseURL+rel] = s
		}
		loaded = append(loaded, s)
	}
	for _, s := range loaded {
		if s.ID != "" {
			c.byRef[s.ID] = s
		}
	}
	for _, s := range loaded {
		sch, err := comp.Compile(r.fileURL(s.Path))
		if err != nil {
			fail(s.Path, "does not compile: %v", err)
			continue
		}
		s.sch = sch
		c.schemas = append(c.schemas, s)
		c.byName[s.Name] = append(c.byName[s.Name], s)
	}
	// A schema that did not compile is not served by any of its names.
	for ref, s := range c.byRef {
		if s.sch == nil {
			delete(c.byRef, ref)
		}
	}
	sort.Slice(c.problems, func(i, j int) bool { return c.problems[i].Path < c.problems[j].Path })
	sort.Slice(c.schemas, func(i, j int) bool { return c.schemas[i].less(c.schemas[j]) })
	for _, same := range c.byName {
		sort.Slice(same, func(i, j int) bool { return same[i].less(same[j]) })
	}
	return nil
}

// less orders schemas by name, then version, then path.
func (s *Schema) less(o *Schema) bool {
	if s.Name != o.Name {
		return s.Name < o.Name
	}
	if s.Version != o.Version {
		return s.Version < o.Version
	}
	return s.Path < o.Path
}

// versionOf is a schema's version: the version segment of its $id's path
// (https://x/2.1.0/asset.schema.json), else its "version" member, else the
// version segment of the folder it is in (v2/asset.json).
func versionOf(rel string, doc any) string {
	m, _ := doc.(map[string]any)
	if id, ok := m["$id"].(string); ok {
		if u, err := url.Parse(id); err == nil {
			if seg := strings.Split(strings.Trim(u.Path, "/"), "/"); len(seg) > 1 && versionSegment.MatchString(seg[len(seg)-2]) {
				return seg[len(seg)-2]
			}
		}
	}
	if v, ok := m["version"].(string); ok && v != "" {
		return v
	}
	if dir := path.Base(path.Dir(rel)); versionSegment.MatchString(dir) {
		return dir
	}
	return ""
}

// rootLoader resolves what AddResource did not: a loaded schema by $id (the
// compiler knows file URLs only), a file inside the schemas root, or a
// mapped URL prefix. Everything else is refused, never fetched.
type rootLoader struct {
	catalog *Catalog
	urlMap  map[string]string
	baseURL string
}

// checkBaseURL refuses a base URL that could not name the root's files.
func checkBaseURL(base string) error {
	if base == "" {
		return nil
	}
	u, err := url.Parse(base)
	switch {
	case err != nil:
		return fmt.Errorf("schemas_base_url %q: %v", base, err)
	case !u.IsAbs() || u.Host == "" && u.Scheme != "urn" && u.Scheme != "file":
		return fmt.Errorf("schemas_base_url %q: want an absolute URL such as https://example.com/schemas/", base)
	case !strings.HasSuffix(base, "/") || u.RawQuery != "" || u.Fragment != "":
		return fmt.Errorf("schemas_base_url %q: want a URL ending in \"/\" with no query or fragment, such as https://example.com/schemas/", base)
	}
	return nil
}

func (l *rootLoader) Load(u string) (any, error) {
	if s, ok := l.catalog.byRef[u]; ok {
		return s.doc, nil
	}
	for prefix, dir := range l.urlMap {
		if rest, ok := strings.CutPrefix(u, prefix); ok {
			p, err := safeJoin(dir, rest)
			if err != nil {
				return nil, fmt.Errorf("$ref %s: %w", u, err)
			}
			f, err := safefile.Open(p)
			if err != nil {
				return nil, fmt.Errorf("$ref %s: %w", u, err)
			}
			defer f.Close()
			return validate.UnmarshalJSON(f)
		}
	}
	if l.baseURL != "" {
		// A file of the root by its published URL that is not a loaded
		// schema (the file:// branch below reads it, or refuses).
		if rel, ok := strings.CutPrefix(u, l.baseURL); ok && rel != "" {
			u = l.catalog.schemaRoot.fileURL(rel)
			if s, ok := l.catalog.byRef[u]; ok {
				return s.doc, nil
			}
		}
	}
	if parsed, err := url.Parse(u); err == nil && parsed.Scheme == "file" {
		r := l.catalog.schemaRoot
		if rel, ok := strings.CutPrefix(parsed.Path, r.urlPath+"/"); ok {
			if raw, _, err := r.read(rel); err == nil {
				return validate.UnmarshalJSON(bytes.NewReader(raw))
			} else if errors.Is(err, safefile.ErrNotRegular) || !errors.As(err, new(*refusedError)) {
				return nil, fmt.Errorf("$ref %s: %w", u, err)
			}
		}
	}
	return nil, fmt.Errorf("refusing to load %s: $ref must resolve inside the schema roots (no network fetches)", u)
}

var errOutside = errors.New("the path leaves its root")

// refusedError is a path a root will not serve (as opposed to one it does
// not have).
type refusedError struct{ err error }

func (e *refusedError) Error() string { return e.err.Error() }
func (e *refusedError) Unwrap() error { return e.err }

// read returns the file rel of the root and its path relative to the root
// after symbolic links. A path that could leave the root, or that is not a
// regular file (a FIFO, a socket, a device, a directory), is a
// *refusedError; a file the root does not have is fs.ErrNotExist.
func (r root) read(rel string) ([]byte, string, error) {
	if r.fsys == nil {
		return nil, "", fs.ErrNotExist
	}
	if r.dir == "" {
		if err := checkRel(rel); err != nil {
			return nil, "", &refusedError{err}
		}
		if !fs.ValidPath(rel) {
			return nil, "", &refusedError{errors.New("the path is not clean")}
		}
		raw, err := fs.ReadFile(r.fsys, rel)
		if err != nil {
			return nil, "", unwrapPath(err)
		}
		return raw, rel, nil
	}
	p, err := safeJoin(r.dir, rel)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, "", err
		}
		return nil, "", &refusedError{err}
	}
	realRoot, err := filepath.EvalSymlinks(r.dir)
	if err != nil {
		return nil, "", err
	}
	resolved, err := filepath.Rel(realRoot, p)
	if err != nil {
		return nil, "", err
	}
	raw, err := safefile.ReadFileAt(realRoot, resolved)
	if err != nil {
		var nr *safefile.NotRegularError
		if errors.As(err, &nr) {
			nr.Name = rel // the name asked for, not where its links led
			return nil, "", &refusedError{nr}
		}
		return nil, "", err
	}
	return raw, filepath.ToSlash(resolved), nil
}

// checkRel refuses a relative path that could leave its root by its text
// alone: empty, absolute, "..", NUL bytes, backslashes, percent-encoded
// separators or dots.
func checkRel(rel string) error {
	switch {
	case rel == "":
		return errors.New("empty path")
	case strings.ContainsRune(rel, 0):
		return errors.New("the path contains a NUL byte")
	case strings.Contains(rel, `\`):
		return errors.New("the path contains a backslash")
	case strings.Contains(strings.ToLower(rel), "%2f"), strings.Contains(strings.ToLower(rel), "%5c"), strings.Contains(rel, "%2e"), strings.Contains(rel, "%2E"):
		return errors.New("the path contains an encoded separator or dot")
	case strings.HasPrefix(rel, "/") || filepath.IsAbs(rel):
		return errors.New("the path is absolute")
	}
	for _, part := range strings.Split(rel, "/") {
		if part == ".." {
			return errOutside
		}
	}
	return nil
}

// safeJoin resolves rel inside the directory root, refusing anything that
// could leave it: what checkRel refuses, and symlinks pointing outside.
func safeJoin(root, rel string) (string, error) {
	if err := checkRel(rel); err != nil {
		return "", err
	}
	absRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return "", err
	}
	p := filepath.Join(absRoot, filepath.FromSlash(rel))
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", err
	}
	if real != absRoot && !strings.HasPrefix(real, absRoot+string(filepath.Separator)) {
		return "", errOutside
	}
	return real, nil
}

func (c *Catalog) loadExamples() error {
	files, _, err := jsonFiles(c.exampleRoot.fsys)
	if err != nil {
		return fmt.Errorf("read examples in %s: %w", c.examplesOrigin, err)
	}
	for _, rel := range files {
		ex := Example{Path: rel, Component: componentOf(rel)}
		if raw, err := c.exampleRoot.readFile(rel); err == nil {
			var head struct {
				Schema string `json:"$schema"`
			}
			if json.Unmarshal(raw, &head) == nil && head.Schema != "" {
				ex.schemaRef = head.Schema
				if s := c.resolveRef(head.Schema); s != nil {
					ex.Component = s.Name
				}
			}
		}
		c.examples = append(c.examples, ex)
	}
	sort.Slice(c.examples, func(i, j int) bool {
		a, b := c.examples[i], c.examples[j]
		if a.Component != b.Component {
			return a.Component < b.Component
		}
		return a.Path < b.Path
	})
	return nil
}

// componentOf guesses a component from a file name ("Control-Bundle_Example.json"
// -> "control-bundle") when the example names no known schema.
func componentOf(rel string) string {
	base := strings.TrimSuffix(filepath.Base(rel), ".json")
	if i := strings.Index(base, "_"); i > 0 {
		base = base[:i]
	}
	return strings.ToLower(base)
}

// resolveRef finds the schema a document's "$schema" names: an $id, a path
// relative to the schemas root ("jsonschema/x.schema.json" or
// "x.schema.json"), or a name that only one schema has.
func (c *Catalog) resolveRef(ref string) *Schema {
	if s, ok := c.byRef[ref]; ok {
		return s
	}
	if same := c.byName[schemaName(ref)]; len(same) == 1 {
		return same[0]
	}
	return nil
}

// Schemas lists the schemas (sorted by name, version, path).
func (c *Catalog) Schemas() []*Schema { return c.schemas }

// maxNamesShown bounds the schema names an error lists.
const maxNamesShown = 20

// Available names the catalog's schemas and where they came from, for an
// error about a schema it does not have: "available: a, b, c (from embedded
// synesthetic-schemas 0.7.3)". Past maxNamesShown names it says how many
// more. A schema whose name is shared is listed as what names it alone.
func (c *Catalog) Available() string {
	origin := c.Origin
	if origin == "" {
		origin = "no schema root"
	}
	if len(c.schemas) == 0 {
		return "the catalog has no schemas (from " + origin + ")"
	}
	names := make([]string, 0, min(len(c.schemas), maxNamesShown))
	for _, s := range c.schemas {
		if len(names) == maxNamesShown {
			break
		}
		names = append(names, c.RefOf(s))
	}
	list := strings.Join(names, ", ")
	if more := len(c.schemas) - len(names); more > 0 {
		list += fmt.Sprintf(" and %d more", more)
	}
	return "available: " + list + " (from " + origin + ")"
}

// LookupError is why a reference names no single schema of the catalog.
type LookupError struct {
	Ref string
	// Candidates are the schemas an ambiguous name fits (several).
	Candidates []*Schema
	// Broken are the files of that name that did not load.
	Broken []Problem
	// available is Catalog.Available, for an unknown name.
	available string
}

func (e *LookupError) Error() string {
	ref := truncate(e.Ref, 100)
	switch {
	case len(e.Candidates) > 1:
		list := make([]string, len(e.Candidates))
		for i, s := range e.Candidates {
			list[i] = s.Path
			if s.Version != "" {
				list[i] = s.Name + "@" + s.Version + " (" + s.Path + ")"
			}
		}
		return fmt.Sprintf("schema name %q is ambiguous: %d schemas have it: %s; name one by its path, or as name@version where their versions differ",
			ref, len(e.Candidates), strings.Join(list, ", "))
	case len(e.Broken) > 0:
		return fmt.Sprintf("schema %q did not load: %s: %s", ref, e.Broken[0].Path, e.Broken[0].Error)
	}
	return "unknown schema: " + ref + "; " + e.available
}

// Resolve finds the one schema a client names, trying in turn:
//   - its path under the schemas root ("v2/asset.json") or its $id;
//   - name@version ("asset@v2");
//   - its name ("asset"), when only one schema has it; the nested alias
//     names the canonical synesthetic-asset.
//
// Anything else is a *LookupError: unknown (with the names available), a
// name several schemas share (with the candidates), or a file that did not
// load.
func (c *Catalog) Resolve(ref string) (*Schema, error) {
	s, same := c.resolve(ref)
	if s != nil {
		return s, nil
	}
	e := &LookupError{Ref: ref, Candidates: same}
	if ref == AliasNested {
		e.Ref = AliasCanonical
	}
	if len(same) == 0 {
		for _, p := range c.problems {
			if p.Path == e.Ref || schemaName(p.Path) == e.Ref {
				e.Broken = append(e.Broken, p)
			}
		}
		e.available = c.Available()
	}
	return nil, e
}

// resolve is Resolve without the error: the schema, or the candidates of a
// shared name (none: unknown).
func (c *Catalog) resolve(ref string) (*Schema, []*Schema) {
	if ref == AliasNested {
		ref = AliasCanonical
	}
	if s, ok := c.byRef[ref]; ok {
		return s, nil
	}
	var same []*Schema
	if name, ver, ok := cutVersion(ref); ok && len(c.byName[name]) > 0 {
		for _, s := range c.byName[name] {
			if s.Version == ver {
				same = append(same, s)
			}
		}
	} else {
		same = c.byName[ref]
	}
	if len(same) == 1 {
		return same[0], nil
	}
	return nil, same
}

// cutVersion splits "name@version".
func cutVersion(ref string) (name, version string, ok bool) {
	i := strings.LastIndexByte(ref, '@')
	if i <= 0 || i == len(ref)-1 {
		return "", "", false
	}
	return ref[:i], ref[i+1:], true
}

// RefOf is the shortest reference that names s alone: its name, else
// name@version, else its path.
func (c *Catalog) RefOf(s *Schema) string {
	for _, ref := range []string{s.Name, s.Name + "@" + s.Version} {
		if got, _ := c.resolve(ref); got == s && ref != AliasNested {
			return ref
		}
	}
	return s.Path
}

// Lookup finds the one schema a reference names (see Resolve).
func (c *Catalog) Lookup(ref string) (*Schema, bool) {
	s, err := c.Resolve(ref)
	return s, err == nil
}

// Examples lists the examples of one component, or all for "all" or "".
func (c *Catalog) Examples(component string) []Example {
	var out []Example
	for _, e := range c.examples {
		if component == "" || component == "all" || e.Component == component {
			out = append(out, e)
		}
	}
	return out
}

// Validate checks an instance in encoding/json's decoded form (UseNumber
// or not) against a schema; see ValidateDoc.
func (c *Catalog) Validate(instance any, ref string) (ok bool, errs []validate.Violation, err error) {
	doc, derr := jsonval.FromAny(instance)
	if derr != nil {
		return false, []validate.Violation{{Path: "", Msg: "not a JSON value: " + derr.Error()}}, nil
	}
	return c.ValidateDoc(doc, ref)
}

// ValidateDoc checks a decoded document against the schema ref names (see
// Resolve; a *LookupError when it names none). A top-level "$schema" that
// names a catalog schema is the document's reference to its schema, not
// content, and is set aside; for the nested alias a top-level "$schemaRef"
// is ignored too. Errors are the validator's leaves, sorted by path then
// message.
func (c *Catalog) ValidateDoc(doc *jsonval.Doc, ref string) (ok bool, errs []validate.Violation, err error) {
	s, err := c.Resolve(ref)
	if err != nil {
		return false, nil, err
	}
	if c.docSchema(doc) != nil {
		doc = doc.Without("$schema")
	}
	if ref == AliasNested {
		doc = doc.Without("$schemaRef")
	}
	if vs := s.sch.Validate(doc, nil); vs != nil {
		return false, vs, nil
	}
	return true, nil, nil
}

// SchemaOf is the reference (see RefOf) of the catalog schema a document's
// top-level "$schema" refers to, or "".
func (c *Catalog) SchemaOf(doc *jsonval.Doc) string {
	if s := c.docSchema(doc); s != nil {
		return c.RefOf(s)
	}
	return ""
}

// docSchema is the catalog schema a document's top-level "$schema" refers
// to, or nil.
func (c *Catalog) docSchema(doc *jsonval.Doc) *Schema {
	if ref := doc.Get(doc.Root(), "$schema"); ref != nil && ref.Kind() == jsonval.String {
		return c.resolveRef(doc.Str(ref))
	}
	return nil
}
