package schemas

import (
	"errors"
	"fmt"
)

// ErrNoSchema is ValidateStandalone's refusal of a document that names no
// loaded schema in its top-level $schema when no schema was given: there is
// nothing to validate it against, which is a usage error, not an invalid
// document.
var ErrNoSchema = errors.New("the document names no loaded schema in a top-level $schema: name one with --schema NAME")

// Standalone is what validating one document without a daemon found
// (`hearthd validate`).
type Standalone struct {
	// Result is validate_asset's result for the document.
	Result map[string]any
	// Valid reports whether the document is valid.
	Valid bool
	// Problems are the schema files that did not load; the rest served.
	Problems []Problem
}

// ValidateStandalone validates one JSON document with the same catalog and
// rules as validate_asset, without a daemon. schema names the schema; "" takes
// the document's top-level $schema. getenv reads the settings as the daemon
// does, so with no schema root configured the embedded catalog is used. The
// error is a document that is not JSON or a catalog that does not load.
func ValidateStandalone(raw []byte, schema string, getenv func(string) string) (Standalone, error) {
	doc, err := decode(raw)
	if err != nil {
		return Standalone{}, fmt.Errorf("not valid JSON: %w", err)
	}
	schemas, examples := Roots(getenv)
	cat, err := LoadRoots(schemas, examples, Options{BaseURL: getenv("SYN_SCHEMAS_BASE_URL")})
	if err != nil {
		return Standalone{}, fmt.Errorf("loading the schema catalog: %w", missingRoot(err, "schemas_dir", "SYN_SCHEMAS_DIR", getenv))
	}
	if schema == "" {
		if schema = cat.SchemaOf(doc); schema == "" {
			return Standalone{}, ErrNoSchema
		}
	}
	res := validateDoc(cat, doc, schema)
	return Standalone{Result: res, Valid: res["ok"] == true, Problems: cat.Problems()}, nil
}
