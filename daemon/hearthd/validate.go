package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/hearth-mcp/hearth/pkg/frame"
	"github.com/hearth-mcp/hearth/pkg/schemas"
)

// Exit codes of hearthd validate (docs/reference.md, Commands).
const (
	exitValid   = 0
	exitInvalid = 1
	exitIO      = 2
)

const validateUsage = "usage: hearthd validate <path|-> [--schema NAME]"

// validateCmd is `hearthd validate <path|-> [--schema NAME]`: it validates
// one file (or stdin) with the same catalog and rules as validate_asset,
// without a daemon, and prints the JSON result. getenv reads the settings
// (hearthd passes its config file's settings).
func validateCmd(args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	path, schema, ok := validateArgs(args, stderr)
	if !ok {
		return exitIO
	}
	var raw []byte
	var err error
	if path == "-" {
		raw, err = io.ReadAll(io.LimitReader(stdin, frame.MaxLine+1))
	} else {
		raw, err = os.ReadFile(path)
	}
	if err != nil {
		fmt.Fprintln(stderr, "hearthd validate:", err)
		return exitIO
	}
	res, err := schemas.ValidateStandalone(raw, schema, getenv)
	if errors.Is(err, schemas.ErrNoSchema) {
		fmt.Fprintf(stderr, "hearthd validate: %s: %v\n%s\n", path, err, validateUsage)
		return exitIO
	}
	if err != nil {
		fmt.Fprintf(stderr, "hearthd validate: %s: %v\n", path, err)
		return exitIO
	}
	for _, p := range res.Problems {
		fmt.Fprintf(stderr, "hearthd validate: warning: schema %s did not load: %s\n", p.Path, p.Error)
	}
	out, _ := frame.Marshal(res.Result)
	fmt.Fprintln(stdout, string(out))
	if res.Valid {
		return exitValid
	}
	return exitInvalid
}

// validateArgs reads `<path|-> [--schema NAME | --schema=NAME]`.
func validateArgs(args []string, stderr io.Writer) (path, schema string, ok bool) {
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "--schema" && i+1 < len(args):
			schema = args[i+1]
			i++
		case strings.HasPrefix(a, "--schema=") && len(a) > len("--schema="):
			schema = strings.TrimPrefix(a, "--schema=")
		case path == "" && (a == "-" || !strings.HasPrefix(a, "-")):
			path = a
		default:
			fmt.Fprintf(stderr, "hearthd validate: unexpected argument %q\n%s\n", a, validateUsage)
			return "", "", false
		}
	}
	if path == "" {
		fmt.Fprintln(stderr, validateUsage)
		return "", "", false
	}
	return path, schema, true
}
