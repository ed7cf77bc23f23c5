package schemas

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestValidateCLIExitCodes(t *testing.T) {
	s, e := smallRoot(t)
	env := func(k string) string { return map[string]string{"SYN_SCHEMAS_DIR": s, "SYN_EXAMPLES_DIR": e}[k] }
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(content), 0o644)
		return p
	}
	cases := []struct {
		args []string
		code int
		out  string
	}{
		{[]string{filepath.Join(e, "Part_Example.json")}, 0, `{"ok":true}`},
		{[]string{write("a.json", `{"name":"x"}`), "--schema", "synesthetic-asset"}, 0, `{"ok":true}`},
		{[]string{write("b.json", `{"name":1}`), "--schema=synesthetic-asset"}, 1, `"reason":"validation_failed"`},
		{[]string{write("c.json", `{"name":"x"}`)}, 1, `schema is required`},
		{[]string{write("d.json", `{"name":`), "--schema", "part"}, 2, ""},
		{[]string{filepath.Join(dir, "missing.json")}, 2, ""},
		{[]string{}, 2, ""},
		{[]string{"a", "b"}, 2, ""},
	}
	for _, c := range cases {
		var out, errOut bytes.Buffer
		if code := ValidateCLI(c.args, &out, &errOut, env); code != c.code || !strings.Contains(out.String(), c.out) {
			t.Errorf("%v: exit %d (want %d), stdout %q, stderr %q", c.args, code, c.code, out.String(), errOut.String())
		}
	}
}
