package shim

import (
	"maps"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestEntryEnvTellsTheEntrysVariables(t *testing.T) {
	parent := []string{"PATH=/usr/bin", "HOME=/home/u", "TERM=xterm", "SHLVL=1", "VSCODE_PID=7"}
	// What Claude Code gives every stdio server, none of it in its own
	// environment: a new session id each session.
	claude := []string{"CLAUDE_CODE_SESSION_ID=5f0c", "CLAUDECODE=1", "AI_AGENT=claude-code", "CLAUDE_CODE_ENTRYPOINT=cli",
		"CLAUDE_PROJECT_DIR=/p", "COREPACK_ENABLE_AUTO_PIN=0", "NoDefaultCurrentDirectoryInExePath=1"}
	own := append([]string{"PATH=/usr/bin", "HOME=/home/u", "TERM=xterm", "SHLVL=2", "_=/usr/bin/hearth", "PWD=/x",
		"API_TOKEN=secret", "DEBUG=1", "HEARTH_HOME=/h", "MCP_SOCKET_PATH=/s", "EXTRA=e", "VSCODE_PID=7"}, claude...)
	clientWant := map[string]string{"VSCODE_PID": "7"}
	for _, kv := range claude {
		k, v, _ := strings.Cut(kv, "=")
		clientWant[k] = v
	}
	for _, tc := range []struct {
		name        string
		environ     []string
		parentKnown bool
		explicit    bool
		named       []string
		entry       map[string]string
		client      map[string]string
	}{
		{"told from the parent", append(own, "TERM=vt100"), true, false, nil,
			map[string]string{"API_TOKEN": "secret", "DEBUG": "1", "EXTRA": "e", "TERM": "vt100"}, clientWant},
		{"named: exactly those, whatever the parent", own, true, true, []string{"API_TOKEN", "TERM", "MISSING", "HEARTH_HOME"},
			map[string]string{"API_TOKEN": "secret", "TERM": "xterm"}, clientWant},
		{"named empty: none", own, true, true, nil, map[string]string{}, clientWant},
		{"a client's variable named is the entry's", own, true, true, []string{"CLAUDE_PROJECT_DIR"},
			map[string]string{"CLAUDE_PROJECT_DIR": "/p"}, func() map[string]string {
				m := map[string]string{}
				for k, v := range clientWant {
					if k != "CLAUDE_PROJECT_DIR" {
						m[k] = v
					}
				}
				return m
			}()},
		{"no parent, nothing named", []string{"A=1", "CLAUDECODE=1"}, false, false, nil, map[string]string{}, map[string]string{"CLAUDECODE": "1"}},
		{"no parent, named", []string{"A=1", "B=2"}, false, true, []string{"B", "C"}, map[string]string{"B": "2"}, map[string]string{}},
	} {
		entry, client := EntryEnv(tc.environ, parent, tc.parentKnown, tc.explicit, tc.named)
		if !maps.Equal(entry, tc.entry) || !maps.Equal(client, tc.client) {
			t.Errorf("%s:\n entry %v, want %v\nclient %v, want %v", tc.name, entry, tc.entry, client, tc.client)
		}
	}
}

// `--env` and HEARTH_RUN_ENV name the entry's variables; together they add.
func TestParseRunEnv(t *testing.T) {
	environ := []string{"A=1", "B=2", "C=3", "D=4", "CLAUDE_CODE_SESSION_ID=s", "HEARTH_RUN_ENV=D"}
	parent := []string{"A=1"}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--env", "B", "--", "/opt/srv"}, "B=2 D=4"},
		{[]string{"--env=B,C", "--share", "global", "--", "/opt/srv"}, "B=2 C=3 D=4"},
		{[]string{"--share=client", "--env", "C", "--env", "B", "name"}, "B=2 C=3 D=4"},
		{[]string{"--env=", "--", "/opt/srv"}, "D=4"},
		// --env before -- or another option names none: -- is no list.
		{[]string{"--env", "--", "/opt/srv"}, "D=4"},
		{[]string{"--env", "--share", "client", "--", "/opt/srv"}, "D=4"},
		{[]string{"--env", "--name", "x", "--", "/opt/srv"}, "D=4"},
	} {
		r, err := ParseRun(tc.args, environ, parent, true)
		if err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		var got []string
		for k, v := range r.Env {
			got = append(got, k+"="+v)
		}
		slices.Sort(got)
		if strings.Join(got, " ") != tc.want || r.ClientEnv["CLAUDE_CODE_SESSION_ID"] != "s" {
			t.Errorf("%v: env %v, client %v; want %s", tc.args, got, r.ClientEnv, tc.want)
		}
	}
	// Without a list, the comparison with the parent.
	r, err := ParseRun([]string{"--", "/opt/srv"}, environ[:5], parent, true)
	if err != nil || len(r.Env) != 3 || r.Env["B"] != "2" || r.ClientEnv["CLAUDE_CODE_SESSION_ID"] != "s" {
		t.Fatalf("compared: %v %v %v", r.Env, r.ClientEnv, err)
	}
	if _, err := ParseRun([]string{"--env"}, nil, nil, false); err == nil || !strings.Contains(err.Error(), "want NAME") {
		t.Fatalf("--env without names: %v", err)
	}
	r, err = ParseRun([]string{"--env", "--", "npx", "--env", "x"}, environ, parent, true)
	if err != nil || !strings.HasSuffix(r.Command, "npx") || strings.Join(r.Args, " ") != "--env x" {
		t.Fatalf("--env -- npx: %+v %v", r, err)
	}
}

// --name carries the client's own name for the entry; it takes a value.
func TestParseRunName(t *testing.T) {
	for _, tc := range []struct {
		args  []string
		entry string // "" with err: an error's words
		err   string
	}{
		{[]string{"--name", "memory", "--", "/opt/srv"}, "memory", ""},
		{[]string{"--env=A", "--name=my server", "--share", "global", "--", "/opt/srv"}, "my server", ""},
		{[]string{"--name"}, "", "want the name"},
		{[]string{"--name", "--", "/opt/srv"}, "", "want the name"},
		{[]string{"--name=", "--", "/opt/srv"}, "", "want the name"},
		{[]string{"--", "/opt/srv", "--name", "x"}, "", ""}, // the server's own argument
	} {
		r, err := ParseRun(tc.args, nil, nil, false)
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%v: %+v %v, want an error saying %q", tc.args, r, err, tc.err)
			}
		case err != nil || r.Entry != tc.entry:
			t.Errorf("%v: entry %q %v, want %q", tc.args, r.Entry, err, tc.entry)
		}
	}
}

// A known client's namespaces are its own only where its marks say it
// started the shim; the names observed are the client's whoever started
// it; a named variable is always the entry's.
func TestClientVariablesByMarks(t *testing.T) {
	parent := []string{"PATH=/usr/bin"}
	for _, tc := range []struct {
		name    string
		environ []string
		named   []string
		entry   string // sorted NAME=VALUE, space-separated
	}{
		{"a Claude Code variable nobody has seen yet", []string{"CLAUDECODE=1", "CLAUDE_CODE_SESSION_ID=s", "CLAUDE_CODE_NEXT_THING=n", "CLAUDE_LATER=l", "TOKEN=t"}, nil, "TOKEN=t"},
		{"the same under another client: the entry's", []string{"CLAUDE_CODE_NEXT_THING=n", "CLAUDE_API_KEY=k", "TOKEN=t"}, nil, "CLAUDE_API_KEY=k CLAUDE_CODE_NEXT_THING=n TOKEN=t"},
		{"observed names without marks", []string{"CLAUDE_CODE_CHILD_NOTES_DIR=/tmp/n", "AI_AGENT=x", "TOKEN=t"}, nil, "TOKEN=t"},
		{"Electron's namespace under its marks", []string{"ELECTRON_RUN_AS_NODE=1", "ELECTRON_EXTRA=e", "VSCODE_NLS_CONFIG={}", "TOKEN=t"}, nil, "TOKEN=t"},
		{"named is the entry's, marks or not", []string{"CLAUDECODE=1", "CLAUDE_API_KEY=k"}, []string{"CLAUDE_API_KEY"}, "CLAUDE_API_KEY=k"},
	} {
		entry, _ := EntryEnv(tc.environ, parent, true, tc.named != nil, tc.named)
		var got []string
		for k, v := range entry {
			got = append(got, k+"="+v)
		}
		slices.Sort(got)
		if strings.Join(got, " ") != tc.entry {
			t.Errorf("%s: entry %v, want %s", tc.name, got, tc.entry)
		}
	}
}

func TestParseRun(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		sh = "sh" // not found: left bare for the daemon (Windows)
	}
	srv, _ := filepath.Abs("./srv.js")
	opt, _ := filepath.Abs("/opt/srv") // C:\opt\srv on Windows: the client's drive
	for _, tc := range []struct {
		args []string
		want string // "command args..." or "name", or an error's words
	}{
		{[]string{"--", "sh", "-c", "x"}, sh + " -c x"},
		{[]string{"--", "/opt/srv", "--stdio"}, opt + " --stdio"},
		{[]string{"--", "no-such-program-anywhere"}, "no-such-program-anywhere"},
		{[]string{"everything"}, "name everything or everything"},
		{nil, "error needs a server"},
		{[]string{"--"}, "error no command after --"},
		// Without --, as the MCP Inspector passes it: a name and a
		// command at once, for the daemon to choose.
		{[]string{"a", "b"}, "name a or a b"},
		{[]string{"sh", "-c", "x"}, "name sh or " + sh + " -c x"},
		{[]string{"./srv.js", "--stdio"}, "name ./srv.js or " + srv + " --stdio"},
		{[]string{"-x"}, "error then NAME"},
		{[]string{"--share", "client", "--", "/opt/srv"}, opt},
		{[]string{"--share=global", "everything"}, "name everything or everything"},
		{[]string{"--share", "everyone", "--", "x"}, "error want global, directory, client or exclusive"},
		{[]string{"--share"}, "error want global"},
		{[]string{"--env", "A", "--share", "client", "--", "/opt/srv"}, opt},
	} {
		r, err := ParseRun(tc.args, nil, nil, false)
		var got string
		switch {
		case err != nil:
			got = "error " + err.Error()
		case r.Name != "":
			got = "name " + r.Name + " or " + strings.Join(append([]string{r.Command}, r.Args...), " ")
		default:
			got = strings.Join(append([]string{r.Command}, r.Args...), " ")
		}
		if !strings.HasPrefix(got, tc.want) && !strings.Contains(got, strings.TrimPrefix(tc.want, "error ")) {
			t.Errorf("%v: got %q, want %q", tc.args, got, tc.want)
		}
	}
}

// `hearth run --url`: the URL and headers, with the other options; and
// every bad input refused with an error that says what is wanted and shows
// no header value.
func TestParseRunURL(t *testing.T) {
	r, err := ParseRun([]string{"--share", "client", "--name", "tracker", "--url", "https://mcp.example/mcp?x=1", "--header", "X-Api-Key: ${secret:k}", "--header=X-Region: eu"}, nil, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	if r.URL != "https://mcp.example/mcp?x=1" || !slices.Equal(r.Headers, []string{"X-Api-Key: ${secret:k}", "X-Region: eu"}) || r.Sharing != "client" || r.Entry != "tracker" || r.Command != "" || len(r.Env) != 0 {
		t.Fatalf("%+v", r)
	}
	if r, err := ParseRun([]string{"--url=http://127.0.0.1:8080/mcp"}, nil, nil, false); err != nil || r.URL != "http://127.0.0.1:8080/mcp" {
		t.Fatalf("--url=: %+v %v", r, err)
	}
	const value = "sk-do-not-show-1234"
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--url"}, "want the remote server's URL"},
		{[]string{"--url", ""}, "want the remote server's URL"},
		{[]string{"--url", "ftp://h/mcp"}, "want an absolute https:// URL"},
		{[]string{"--url", "mcp.example/mcp"}, "want an absolute https:// URL"},
		{[]string{"--url", "https:///mcp"}, "want an absolute https:// URL"},
		{[]string{"--url", "https://h/mcp#top"}, "no #fragment"},
		{[]string{"--url", "https://h/m cp"}, "no #fragment, space"},
		{[]string{"--url", "https://h/mcp", "npx", "srv"}, "takes no command"},
		{[]string{"--header", "X: y", "--", "npx"}, "only with --url"},
		{[]string{"--url", "https://h/mcp", "--header"}, `want "Name: value"`},
		{[]string{"--url", "https://h/mcp", "--header", "no colon " + value}, `want "Name: value"`},
		{[]string{"--url", "https://h/mcp", "--header", ": " + value}, `want "Name: value"`},
		{[]string{"--url", "https://h/mcp", "--header", "Bad Name: " + value}, "is not a header name"},
		{[]string{"--url", "https://h/mcp", "--header", "X-Key: " + value + "\r\nInjected: 1"}, "control character"},
		{[]string{"--url", "https://h/mcp", "--header", "Mcp-Session-Id: " + value}, "hearth sets that header itself"},
		{[]string{"--url", "https://h/mcp", "--header", "host: " + value}, "hearth sets that header itself"},
	} {
		_, err := ParseRun(tc.args, nil, nil, false)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: got %v, want %q", tc.args, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), value) {
			t.Errorf("%q: the error shows the header's value: %v", tc.args, err)
		}
	}
}
