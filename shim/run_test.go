package shim

import (
	"os/exec"
	"strings"
	"testing"
)

func TestEntryEnvTellsTheEntrysVariables(t *testing.T) {
	parent := []string{"PATH=/usr/bin", "HOME=/home/u", "TERM=xterm", "SHLVL=1"}
	own := []string{"PATH=/usr/bin", "HOME=/home/u", "TERM=xterm", "SHLVL=2", "_=/usr/bin/hearth", "PWD=/x",
		"API_TOKEN=secret", "DEBUG=1", "HEARTH_HOME=/h", "MCP_SOCKET_PATH=/s", "EXTRA=e", "HEARTH_RUN_ENV=TERM"}
	got := EntryEnv(append(own, "TERM=vt100"), parent, true)
	want := map[string]string{"API_TOKEN": "secret", "DEBUG": "1", "EXTRA": "e", "TERM": "vt100"}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Fatalf("%s: got %q, want %q (all %v)", k, got[k], v, got)
		}
	}
	// Without the parent's environment only HEARTH_RUN_ENV names them.
	if got := EntryEnv([]string{"A=1", "B=2", "HEARTH_RUN_ENV=B, C"}, nil, false); len(got) != 1 || got["B"] != "2" {
		t.Fatalf("explicit only: %v", got)
	}
}

func TestParseRun(t *testing.T) {
	sh, _ := exec.LookPath("sh")
	for _, tc := range []struct {
		args []string
		want string // "command args..." or "name", or an error's words
	}{
		{[]string{"--", "sh", "-c", "x"}, sh + " -c x"},
		{[]string{"--", "/opt/srv", "--stdio"}, "/opt/srv --stdio"},
		{[]string{"--", "no-such-program-anywhere"}, "no-such-program-anywhere"},
		{[]string{"everything"}, "name everything"},
		{nil, "error needs a server"},
		{[]string{"--"}, "error no command after --"},
		{[]string{"a", "b"}, "error takes -- COMMAND"},
		{[]string{"-x"}, "error takes -- COMMAND"},
		{[]string{"--share", "client", "--", "/opt/srv"}, "/opt/srv"},
		{[]string{"--share=global", "everything"}, "name everything"},
		{[]string{"--share", "everyone", "--", "x"}, "error want global, directory or client"},
		{[]string{"--share"}, "error want global"},
	} {
		r, err := ParseRun(tc.args, nil, nil, false)
		var got string
		switch {
		case err != nil:
			got = "error " + err.Error()
		case r.Name != "":
			got = "name " + r.Name
		default:
			got = strings.Join(append([]string{r.Command}, r.Args...), " ")
		}
		if !strings.HasPrefix(got, tc.want) && !strings.Contains(got, strings.TrimPrefix(tc.want, "error ")) {
			t.Errorf("%v: got %q, want %q", tc.args, got, tc.want)
		}
	}
}
