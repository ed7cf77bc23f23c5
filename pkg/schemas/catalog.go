// Package schemas is the schema family (seed 001): a catalog of JSON Schemas
// and examples loaded once from the schema roots, compiled with
// santhosh-tekuri/jsonschema/v6 and kept warm for every client, plus the
// tools that list, read, validate, diff and persist assets.
//
// $ref resolves only inside the roots: by a loaded schema's $id, by file path
// under the schemas root, or through an explicit URL-prefix-to-directory map.
// Nothing is ever fetched over the network.
package schemas

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/hearth-mcp/hearth/pkg/fastcheck"
	"github.com/hearth-mcp/hearth/pkg/jsonval"
	"github.com/hearth-mcp/hearth/pkg/tool"
)

// Alias is seed 001's schema alias: nested assets validate against the
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
	sch     *jsonschema.Schema
	fast    *fastcheck.Checker // nil: the schema needs the full validator
}

// Example is one example document.
type Example struct {
	Component string `json:"component"`
	Path      string `json:"path"` // relative to the examples root, '/'-separated
	schemaRef string
}

// Catalog is an immutable, compiled set of schemas and examples.
type Catalog struct {
	SchemasDir, ExamplesDir string
	schemas                 []*Schema // sorted by name, version, path
	byName                  map[string]*Schema
	byRef                   map[string]*Schema // $id, file URL, relative path
	examples                []Example          // sorted by component, path
}

// Options tune loading.
type Options struct {
	// URLMap serves URL prefixes from local directories (for $refs to
	// documents identified by URL that carry no $id of their own, such as
	// the official test suite's http://localhost:1234/ remotes).
	URLMap map[string]string
}

var versionSegment = regexp.MustCompile(`^v?\d+(\.\d+)*$`)

// Load reads and compiles every *.json under schemasDir and lists the
// examples under examplesDir. An empty dir means none. A schema that does not
// parse or compile fails the whole load, naming it.
func Load(schemasDir, examplesDir string, opts Options) (*Catalog, error) {
	c := &Catalog{SchemasDir: schemasDir, ExamplesDir: examplesDir, byName: map[string]*Schema{}, byRef: map[string]*Schema{}}
	if schemasDir != "" {
		if err := c.loadSchemas(opts); err != nil {
			return nil, err
		}
	}
	if examplesDir != "" {
		if err := c.loadExamples(); err != nil {
			return nil, err
		}
	}
	return c, nil
}

func jsonFiles(root string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(d.Name(), ".json") && d.Type().IsRegular() {
			rel, _ := filepath.Rel(root, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	sort.Strings(out)
	return out, err
}

func schemaName(rel string) string {
	base := filepath.Base(rel)
	base = strings.TrimSuffix(base, ".json")
	return strings.TrimSuffix(base, ".schema")
}

func fileURL(root, rel string) string {
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(filepath.Join(root, rel))}).String()
}

func (c *Catalog) loadSchemas(opts Options) error {
	root, err := filepath.Abs(c.SchemasDir)
	if err != nil {
		return err
	}
	c.SchemasDir = root
	files, err := jsonFiles(root)
	if err != nil {
		return fmt.Errorf("read schemas in %s: %w", root, err)
	}
	comp := jsonschema.NewCompiler()
	comp.DefaultDraft(jsonschema.Draft2020)
	comp.UseLoader(&rootLoader{catalog: c, urlMap: opts.URLMap})
	for _, rel := range files {
		raw, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
		if err != nil {
			return fmt.Errorf("read schema %s: %w", rel, err)
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
		if err != nil {
			return fmt.Errorf("schema %s is not JSON: %w", rel, err)
		}
		s := &Schema{Name: schemaName(rel), Path: rel, raw: raw, doc: doc}
		if m, ok := doc.(map[string]any); ok {
			if id, ok := m["$id"].(string); ok {
				s.ID = id
				if u, err := url.Parse(id); err == nil {
					if seg := strings.Split(strings.Trim(u.Path, "/"), "/"); len(seg) > 1 && versionSegment.MatchString(seg[len(seg)-2]) {
						s.Version = seg[len(seg)-2]
					}
				}
			}
			if v, ok := m["version"].(string); ok && s.Version == "" {
				s.Version = v
			}
		}
		if prev, dup := c.byName[s.Name]; dup {
			return fmt.Errorf("schemas %s and %s have the same name %q", prev.Path, rel, s.Name)
		}
		c.byName[s.Name] = s
		c.byRef[rel] = s
		c.byRef[fileURL(root, rel)] = s
		if err := comp.AddResource(fileURL(root, rel), doc); err != nil {
			return fmt.Errorf("schema %s: %w", rel, err)
		}
		c.schemas = append(c.schemas, s)
	}
	for _, s := range c.schemas {
		if s.ID != "" {
			c.byRef[s.ID] = s
		}
	}
	for _, s := range c.schemas {
		sch, err := comp.Compile(fileURL(root, s.Path))
		if err != nil {
			return fmt.Errorf("schema %s does not compile: %w", s.Path, err)
		}
		s.sch = sch
		s.fast = fastcheck.Compile(sch)
	}
	sort.Slice(c.schemas, func(i, j int) bool {
		a, b := c.schemas[i], c.schemas[j]
		if a.Name != b.Name {
			return a.Name < b.Name
		}
		if a.Version != b.Version {
			return a.Version < b.Version
		}
		return a.Path < b.Path
	})
	return nil
}

// rootLoader resolves what AddResource did not: a loaded schema by $id (the
// compiler knows file URLs only), a file inside the schemas root, or a
// mapped URL prefix. Everything else is refused, never fetched.
type rootLoader struct {
	catalog *Catalog
	urlMap  map[string]string
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
			f, err := os.Open(p)
			if err != nil {
				return nil, fmt.Errorf("$ref %s: %w", u, err)
			}
			defer f.Close()
			return jsonschema.UnmarshalJSON(f)
		}
	}
	if parsed, err := url.Parse(u); err == nil && parsed.Scheme == "file" {
		rel, err := filepath.Rel(l.catalog.SchemasDir, filepath.FromSlash(parsed.Path))
		if err == nil {
			if p, err := safeJoin(l.catalog.SchemasDir, filepath.ToSlash(rel)); err == nil {
				f, err := os.Open(p)
				if err != nil {
					return nil, fmt.Errorf("$ref %s: %w", u, err)
				}
				defer f.Close()
				return jsonschema.UnmarshalJSON(f)
			}
		}
	}
	return nil, fmt.Errorf("refusing to load %s: $ref must resolve inside the schema roots (no network fetches)", u)
}

var errOutside = errors.New("the path leaves its root")

// safeJoin resolves rel inside root, refusing anything that could leave it:
// absolute paths, "..", NUL bytes, backslashes, percent-encoded separators,
// and symlinks pointing outside.
func safeJoin(root, rel string) (string, error) {
	switch {
	case rel == "":
		return "", errors.New("empty path")
	case strings.ContainsRune(rel, 0):
		return "", errors.New("the path contains a NUL byte")
	case strings.Contains(rel, `\`):
		return "", errors.New("the path contains a backslash")
	case strings.Contains(strings.ToLower(rel), "%2f"), strings.Contains(strings.ToLower(rel), "%5c"), strings.Contains(rel, "%2e"), strings.Contains(rel, "%2E"):
		return "", errors.New("the path contains an encoded separator or dot")
	case strings.HasPrefix(rel, "/") || filepath.IsAbs(rel):
		return "", errors.New("the path is absolute")
	}
	for _, part := range strings.Split(rel, "/") {
		if part == ".." {
			return "", errOutside
		}
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
	root, err := filepath.Abs(c.ExamplesDir)
	if err != nil {
		return err
	}
	c.ExamplesDir = root
	files, err := jsonFiles(root)
	if err != nil {
		return fmt.Errorf("read examples in %s: %w", root, err)
	}
	for _, rel := range files {
		ex := Example{Path: rel, Component: componentOf(rel)}
		if raw, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel))); err == nil {
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

// resolveRef finds the schema an example's "$schema" names: an $id, a path
// relative to the schemas root ("jsonschema/x.schema.json" or "x.schema.json"),
// or a bare name.
func (c *Catalog) resolveRef(ref string) *Schema {
	if s, ok := c.byRef[ref]; ok {
		return s
	}
	if s, ok := c.byName[schemaName(ref)]; ok {
		return s
	}
	return nil
}

// Schemas lists the schemas (sorted by name, version, path).
func (c *Catalog) Schemas() []*Schema { return c.schemas }

// Lookup finds a schema by name; the nested alias finds the canonical one.
func (c *Catalog) Lookup(name string) (*Schema, bool) {
	if name == AliasNested {
		name = AliasCanonical
	}
	s, ok := c.byName[name]
	return s, ok
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
// or not) against a schema by name; see ValidateDoc.
func (c *Catalog) Validate(instance any, name string) (ok bool, errs []tool.Violation, found bool) {
	doc, err := jsonval.FromAny(instance)
	if err != nil {
		return false, []tool.Violation{{Path: "", Msg: "not a JSON value: " + err.Error()}}, true
	}
	return c.ValidateDoc(doc, name)
}

// ValidateDoc checks a decoded document against a schema by name. A
// top-level "$schema" that names a catalog schema is the document's
// reference to its schema, not content, and is set aside; for the nested
// alias a top-level "$schemaRef" is ignored too (seed 001 §9). Errors are
// the validator's leaves, sorted by path then message.
func (c *Catalog) ValidateDoc(doc *jsonval.Doc, name string) (ok bool, errs []tool.Violation, found bool) {
	s, found := c.Lookup(name)
	if !found {
		return false, nil, false
	}
	if c.SchemaOf(doc) != "" {
		doc = doc.Without("$schema")
	}
	if name == AliasNested {
		doc = doc.Without("$schemaRef")
	}
	// Most documents are valid: the fast checker says so without building
	// the full validator's error tree. Only a document it rejects (or a
	// schema it cannot check) takes the full path, which gives the errors.
	if s.fast != nil && s.fast.Valid(doc) {
		return true, nil, true
	}
	if err := tool.Validate(s.sch, doc.Any()); err != nil {
		return false, tool.SchemaViolations(err), true
	}
	return true, nil, true
}

// SchemaOf names the catalog schema a document's top-level "$schema"
// refers to, or "".
func (c *Catalog) SchemaOf(doc *jsonval.Doc) string {
	if ref := doc.Get(doc.Root(), "$schema"); ref != nil && ref.Kind() == jsonval.String {
		if s := c.resolveRef(doc.Str(ref)); s != nil {
			return s.Name
		}
	}
	return ""
}
