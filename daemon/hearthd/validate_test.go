package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// schemaRoot writes a two-schema catalog (part, synesthetic-asset) and one
// example; it returns the settings that name it.
func schemaRoot(t *testing.T) (getenv func(string) string, example string) {
	t.Helper()
	root := t.TempDir()
	schemas, examples := filepath.Join(root, "jsonschema"), filepath.Join(root, "examples")
	os.MkdirAll(schemas, 0o755)
	os.MkdirAll(examples, 0o755)
	os.WriteFile(filepath.Join(schemas, "part.schema.json"), []byte(`{"$id":"https://ex.test/2.1.0/part.schema.json","type":"object","properties":{"n":{"type":"number"}},"required":["n"],"additionalProperties":false}`), 0o644)
	os.WriteFile(filepath.Join(schemas, "synesthetic-asset.schema.json"), []byte(`{"$id":"https://ex.test/2.1.0/synesthetic-asset.schema.json","type":"object","additionalProperties":false,
		"properties":{"name":{"type":"string"},"parts":{"type":"array","items":{"$ref":"https://ex.test/2.1.0/part.schema.json"}}},"required":["name"]}`), 0o644)
	example = filepath.Join(examples, "Part_Example.json")
	os.WriteFile(example, []byte(`{"$schema":"jsonschema/part.schema.json","n":1}`), 0o644)
	env := map[string]string{"SYN_SCHEMAS_DIR": schemas, "SYN_EXAMPLES_DIR": examples}
	return func(k string) string { return env[k] }, example
}

func TestValidateExitCodes(t *testing.T) {
	env, example := schemaRoot(t)
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(content), 0o644)
		return p
	}
	cases := []struct {
		args  []string
		stdin string
		code  int
		out   string
		err   string
	}{
		{[]string{example}, "", 0, `{"ok":true}`, ""},
		{[]string{write("a.json", `{"name":"x"}`), "--schema", "synesthetic-asset"}, "", 0, `{"ok":true}`, ""},
		{[]string{"-", "--schema", "synesthetic-asset"}, `{"name":"x"}`, 0, `{"ok":true}`, ""},
		{[]string{write("b.json", `{"name":1}`), "--schema=synesthetic-asset"}, "", 1, `"reason":"validation_failed"`, ""},
		// No --schema and no $schema: nothing to validate against, a usage error.
		{[]string{write("c.json", `{"name":"x"}`)}, "", 2, "", "names no loaded schema"},
		{[]string{"-"}, `{}`, 2, "", "--schema NAME"},
		{[]string{write("d.json", `{"name":`), "--schema", "part"}, "", 2, "", "not valid JSON"},
		{[]string{"-"}, `{"name":`, 2, "", "not valid JSON"},
		{[]string{filepath.Join(dir, "missing.json")}, "", 2, "", "no such file"},
		{[]string{}, "", 2, "", "usage:"},
		{[]string{""}, "", 2, "", "usage:"},
		{[]string{"a", "b"}, "", 2, "", "unexpected argument"},
		{[]string{"--schema"}, "", 2, "", "unexpected argument"},
	}
	for _, c := range cases {
		var out, errOut strings.Builder
		code := validateCmd(c.args, strings.NewReader(c.stdin), &out, &errOut, env)
		if code != c.code || !strings.Contains(out.String(), c.out) || !strings.Contains(errOut.String(), c.err) {
			t.Errorf("%q: exit %d (want %d), stdout %q, stderr %q", c.args, code, c.code, out.String(), errOut.String())
		}
	}
}

// A configured schema root that does not exist is a clear error naming the
// setting and how to get the embedded catalog back.
func TestValidateMissingRoot(t *testing.T) {
	env := func(k string) string {
		if k == "SYN_SCHEMAS_DIR" {
			return "/nonexistent/jsonschema"
		}
		return ""
	}
	var out, errOut strings.Builder
	code := validateCmd([]string{"-", "--schema", "shader"}, strings.NewReader(`{}`), &out, &errOut, env)
	for _, want := range []string{"schemas_dir /nonexistent/jsonschema does not exist", "remove schemas_dir from the config file", "embedded synesthetic-schemas"} {
		if code != exitIO || !strings.Contains(errOut.String(), want) {
			t.Fatalf("exit %d, stderr %q; want 2 and %q", code, errOut.String(), want)
		}
	}
}
