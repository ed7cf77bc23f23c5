package schemas

import (
	"fmt"
	"io"
	"os"

	"github.com/hearth-mcp/hearth/pkg/frame"
)

// CLI exit codes of hearthd validate (README.md, Commands).
const (
	ExitValid   = 0
	ExitInvalid = 1
	ExitIO      = 2
)

// ValidateCLI is `hearthd validate <path> [--schema NAME]`: it validates one
// file with the same catalog and rules as validate_asset, without a daemon,
// and prints the JSON result. Without --schema the document's top-level
// $schema names the schema. getenv reads the settings as the daemon does
// (hearthd passes its config file's settings), so with no schema root
// configured the embedded catalog is used.
func ValidateCLI(args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	var path, schema string
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "--schema" && i+1 < len(args):
			schema = args[i+1]
			i++
		case len(a) > len("--schema=") && a[:len("--schema=")] == "--schema=":
			schema = a[len("--schema="):]
		case path == "" && (a == "-" || a[0] != '-'):
			path = a
		default:
			fmt.Fprintf(stderr, "hearthd validate: unexpected argument %q\nusage: hearthd validate <path|-> [--schema NAME]\n", a)
			return ExitIO
		}
	}
	if path == "" {
		fmt.Fprintln(stderr, "usage: hearthd validate <path|-> [--schema NAME]")
		return ExitIO
	}
	var raw []byte
	var err error
	if path == "-" {
		raw, err = io.ReadAll(io.LimitReader(os.Stdin, frame.MaxLine+1))
	} else {
		raw, err = os.ReadFile(path)
	}
	if err != nil {
		fmt.Fprintln(stderr, "hearthd validate:", err)
		return ExitIO
	}
	doc, err := decode(raw)
	if err != nil {
		fmt.Fprintf(stderr, "hearthd validate: %s is not valid JSON: %v\n", path, err)
		return ExitIO
	}
	schemas, examples := Roots(getenv)
	cat, err := LoadRoots(schemas, examples, Options{BaseURL: getenv("SYN_SCHEMAS_BASE_URL")})
	if err != nil {
		fmt.Fprintln(stderr, "hearthd validate: loading the schema catalog:", err)
		return ExitIO
	}
	for _, p := range cat.Problems() {
		fmt.Fprintf(stderr, "hearthd validate: warning: schema %s did not load: %s\n", p.Path, p.Error)
	}
	if schema == "" {
		schema = cat.SchemaOf(doc)
	}
	res := validateDoc(cat, doc, schema)
	out, _ := frame.Marshal(res)
	fmt.Fprintln(stdout, string(out))
	if res["ok"] == true {
		return ExitValid
	}
	return ExitInvalid
}
