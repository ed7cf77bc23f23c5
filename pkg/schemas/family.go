package schemas

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"go.uber.org/zap"

	"github.com/hearth-mcp/hearth/pkg/config/keys"
	"github.com/hearth-mcp/hearth/pkg/schemas/backend"
	"github.com/hearth-mcp/hearth/pkg/tool"
)

// DefaultMaxBatch is validate_many's cap unless MCP_MAX_BATCH says otherwise.
const DefaultMaxBatch = keys.DefaultMaxBatch

// Family serves the schema tools from a catalog that SIGHUP can reload.
// The catalog is compiled on first need, not when the family opens (the
// compile is a large part of a daemon's start; see docs/architecture.md,
// "The daemon's start"): whatever needs it waits for that first load, and
// the daemon starts it in the background once it serves (Preload).
type Family struct {
	log     *zap.Logger
	getenv  func(string) string
	cat     atomic.Pointer[Catalog]
	loadErr atomic.Pointer[error]
	// first is the first load, of the roots Open found (schemaRoot,
	// exampleRoot); every reader of cat and loadErr waits for it.
	first                   sync.Once
	schemaRoot, exampleRoot Root
	backend                 *backend.Client
	backendErr              error
	maxBatch                int
}

// Roots returns the schema and example roots, in this order: the settings
// (schemas_dir and examples_dir in the config file, or SYN_SCHEMAS_DIR and
// SYN_EXAMPLES_DIR), else libs/synesthetic-schemas/{jsonschema,examples}
// under the working directory, else the embedded synesthetic-schemas
// catalog. The embedded examples are used only with the embedded schemas:
// they are examples of those schemas.
func Roots(getenv func(string) string) (schemas, examples Root) {
	sub := filepath.Join("libs", "synesthetic-schemas")
	isDir := func(p string) bool { fi, err := os.Stat(p); return err == nil && fi.IsDir() }
	switch v := getenv("SYN_SCHEMAS_DIR"); {
	case v != "":
		schemas = Root{Dir: v, Origin: absOr(v) + " (schemas_dir, SYN_SCHEMAS_DIR)"}
	case isDir(filepath.Join(sub, "jsonschema")):
		p := filepath.Join(sub, "jsonschema")
		schemas = Root{Dir: p, Origin: absOr(p) + " (the working directory's " + filepath.ToSlash(sub) + ")"}
	default:
		schemas = EmbeddedSchemas()
	}
	switch v := getenv("SYN_EXAMPLES_DIR"); {
	case v != "":
		examples = Root{Dir: v, Origin: absOr(v) + " (examples_dir, SYN_EXAMPLES_DIR)"}
	case isDir(filepath.Join(sub, "examples")):
		p := filepath.Join(sub, "examples")
		examples = Root{Dir: p, Origin: absOr(p) + " (the working directory's " + filepath.ToSlash(sub) + ")"}
	case schemas.FS != nil:
		examples = EmbeddedExamples()
	}
	return schemas, examples
}

// absOr is p made absolute, or p when that fails.
func absOr(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}

// Open finds the catalog's roots and checks the settings; the catalog is
// compiled on first need or by Preload, whichever comes first. A catalog
// that fails to load does not stop the daemon (it never did): the schema
// tools then say why, daemon_status lists it, and the other families serve
// on. A bad setting (MCP_MAX_BATCH) still fails Open.
func Open(env tool.Env) (tool.Family, error) {
	f := &Family{log: env.Log, getenv: env.Getenv, maxBatch: DefaultMaxBatch}
	if f.log == nil {
		f.log = zap.NewNop()
	}
	if v := env.Getenv("MCP_MAX_BATCH"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("MCP_MAX_BATCH=%q: want a positive integer", v)
		}
		f.maxBatch = n
	}
	f.backend, f.backendErr = backend.New(backend.ConfigFromEnv(env.Getenv), f.validateForBackend)
	if f.backendErr != nil {
		f.log.Error("populate_backend is disabled: bad backend configuration", zap.Error(f.backendErr))
	}
	f.schemaRoot, f.exampleRoot = Roots(f.getenv)
	return f, nil
}

// Preload compiles the catalog now, unless something needing it already
// did (tool.Preloader): the daemon calls it once it serves.
func (f *Family) Preload() { f.loaded() }

// loaded returns once the first load is done, running it if nobody has.
func (f *Family) loaded() {
	f.first.Do(func() {
		if err := f.load(f.schemaRoot, f.exampleRoot); err != nil {
			f.log.Error("the schema catalog did not load; the schema tools will say so", zap.Error(err))
		}
	})
}

// Reload reads the roots again and swaps the catalog atomically. A catalog
// that fails to load leaves the old one serving, and the error says why.
// Before the first load it is the first load, of the roots as they are now.
func (f *Family) Reload() error {
	var err error
	first := false
	schemas, examples := Roots(f.getenv)
	f.first.Do(func() { first, err = true, f.load(schemas, examples) })
	if first {
		return err
	}
	return f.load(schemas, examples)
}

// load compiles the catalog of the roots and swaps it in.
func (f *Family) load(schemas, examples Root) error {
	c, err := LoadRoots(schemas, examples, Options{BaseURL: f.getenv("SYN_SCHEMAS_BASE_URL")})
	if err != nil {
		err = missingRoot(err, "schemas_dir", "SYN_SCHEMAS_DIR", f.getenv)
		if f.cat.Load() == nil {
			f.loadErr.Store(&err)
		}
		return err
	}
	f.cat.Store(c)
	f.loadErr.Store(nil)
	f.log.Info("schema catalog loaded", zap.String("schemas_dir", c.schemasLabel()), zap.String("examples_dir", c.examplesLabel()),
		zap.String("schemas_from", c.Origin), zap.String("examples_from", c.examplesOrigin),
		zap.Int("schemas", len(c.Schemas())), zap.Int("examples", len(c.Examples("all"))), zap.Int("problems", len(c.Problems())))
	for _, p := range c.Problems() {
		f.log.Warn("a schema file did not load; the rest of the catalog serves", zap.String("path", p.Path), zap.String("error", p.Error))
	}
	if err := f.examplesError(c); err != nil {
		f.log.Warn("the examples root did not load; the schemas serve", zap.Error(err))
	}
	return nil
}

// missingRoot words a configured root that does not exist, err being its
// load error: what is off, and how to get the embedded catalog back (a
// copied config file naming a directory the user does not have must not
// leave them guessing). Any other error is returned as it is.
func missingRoot(err error, key, envVar string, getenv func(string) string) error {
	if err == nil || getenv(envVar) == "" || !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return fmt.Errorf("%s %s does not exist: create it, or remove %s from the config file (and %s from the daemon's environment) "+
		"to use the %s catalog, then reload (kill -HUP <pid>, the pid hearthd status shows) or restart hearthd",
		key, getenv(envVar), key, envVar, EmbeddedOrigin)
}

// examplesError is the catalog's examples error, worded by missingRoot.
func (f *Family) examplesError(c *Catalog) error {
	return missingRoot(c.ExamplesError(), "examples_dir", "SYN_EXAMPLES_DIR", f.getenv)
}

// Problems says what of the family does not serve: the catalog that did
// not load, schema files left out, the examples root, a bad backend
// setting. daemon_status lists them.
func (f *Family) Problems() []string {
	f.loaded()
	var out []string
	c := f.cat.Load()
	if c == nil {
		if e := f.loadErr.Load(); e != nil {
			out = append(out, "the schema catalog did not load: "+(*e).Error())
		}
	} else {
		for _, p := range c.Problems() {
			out = append(out, "schema "+p.Path+" did not load: "+p.Error)
		}
		if err := f.examplesError(c); err != nil {
			out = append(out, "the examples did not load: "+err.Error())
		}
	}
	if f.backendErr != nil {
		out = append(out, "populate_backend is disabled: "+f.backendErr.Error())
	}
	return out
}

// Catalog is the catalog being served (nil if none ever loaded), once the
// first load is done.
func (f *Family) Catalog() *Catalog { f.loaded(); return f.cat.Load() }

// Close releases nothing: the catalog is memory only.
func (f *Family) Close() error { return nil }

func (f *Family) catalog() (*Catalog, error) {
	f.loaded()
	if c := f.cat.Load(); c != nil {
		return c, nil
	}
	if e := f.loadErr.Load(); e != nil {
		return nil, tool.Errorf(tool.CapabilityMissing, "the schema catalog did not load: %v", *e)
	}
	return nil, tool.Errorf(tool.CapabilityMissing, "the schema catalog is not loaded")
}

// exampleCatalog is the catalog for the example tools: an examples root
// that did not load is their error, not the schema tools'.
func (f *Family) exampleCatalog() (*Catalog, error) {
	c, err := f.catalog()
	if err != nil {
		return nil, err
	}
	if err := f.examplesError(c); err != nil {
		return nil, tool.Errorf(tool.CapabilityMissing, "the examples did not load (the schemas serve): %v", err)
	}
	return c, nil
}

// ReadyFields names the roots on the daemon's readiness line: a directory,
// "embedded" for the embedded catalog, or nothing. They are the roots the
// catalog loads from, named before it loads (the daemon is ready before
// the catalog is); whether they loaded is the "schema catalog loaded" line
// and daemon_status's problems.
func (f *Family) ReadyFields() []string {
	return []string{"schemas_dir=" + rootLabel(f.schemaRoot), "examples_dir=" + rootLabel(f.exampleRoot)}
}

// rootLabel is what Catalog's labels say of r once loaded.
func rootLabel(r Root) string {
	switch {
	case r.FS != nil:
		return "embedded"
	case r.Dir != "":
		return absOr(r.Dir)
	}
	return ""
}

// schemasLabel and examplesLabel are a root's directory, "embedded", or "".
func (c *Catalog) schemasLabel() string  { return label(c.schemaRoot) }
func (c *Catalog) examplesLabel() string { return label(c.exampleRoot) }

func label(r root) string {
	if r.embedded() {
		return "embedded"
	}
	return r.dir
}

// Resource URIs: hearth://schemas/<ref> (the schema's name, or what names
// it alone when the name is shared; see Catalog.RefOf) and
// hearth://examples/<path>.
const (
	schemaURIPrefix  = "hearth://schemas/"
	exampleURIPrefix = "hearth://examples/"
)

// Resources lists every schema and example as an MCP resource.
func (f *Family) Resources() []tool.Resource {
	f.loaded()
	c := f.cat.Load()
	if c == nil {
		return nil
	}
	var out []tool.Resource
	for _, s := range c.Schemas() {
		out = append(out, tool.Resource{URI: schemaURIPrefix + c.RefOf(s), Name: s.Name, Title: s.Name + " schema " + s.Version,
			Description: "JSON Schema " + s.Path, MimeType: "application/schema+json"})
	}
	for _, e := range c.Examples("all") {
		out = append(out, tool.Resource{URI: exampleURIPrefix + e.Path, Name: e.Path, Title: "example of " + e.Component,
			Description: "Example document for the " + e.Component + " schema", MimeType: "application/json"})
	}
	return out
}

// ReadResource returns a schema's or an example's text; paths obey the same
// traversal rules as get_example.
func (f *Family) ReadResource(uri string) (string, string, error) {
	f.loaded()
	c := f.cat.Load()
	if c == nil {
		return "", "", tool.ErrNoResource
	}
	if name, ok := strings.CutPrefix(uri, schemaURIPrefix); ok {
		s, err := c.Resolve(name)
		if err != nil {
			return "", "", fmt.Errorf("%w: %v", tool.ErrNoResource, err)
		}
		return string(s.raw), "application/schema+json", nil
	}
	if rel, ok := strings.CutPrefix(uri, exampleURIPrefix); ok {
		raw, _, err := c.exampleRoot.read(rel)
		if err != nil {
			return "", "", fmt.Errorf("%w: %v", tool.ErrNoResource, err)
		}
		return string(raw), "application/json", nil
	}
	return "", "", tool.ErrNoResource
}
