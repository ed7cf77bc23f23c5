package adopt

import (
	"path/filepath"
	"strings"
	"testing"
)

const remoteClaude = `{
  "mcpServers": {
    "tracker": {
      "type": "http",
      "url": "https://mcp.tracker.example/mcp",
      "headers": {
        "Authorization": "Bearer sk-live-0123456789",
        "X-Region": "eu"
      }
    },
    "docs": {"type": "sse", "url": "https://docs.example/sse", "headers": {"X-Api-Key": "${secret:docs-key}"}},
    "vars": {"type": "http", "url": "https://v.example/mcp", "headers": {"Authorization": "Bearer ${env:TOKEN}"}},
    "db": {"command": "uvx", "args": ["db-mcp"], "env": {"DB_PASSWORD": "hunter2", "DB_HOST": "localhost"}}
  }
}
`

// Remote entries with headers: a credential in plain text is left alone
// without --secrets (never written into arguments), moved into the store
// with it; a reference to a stored secret moves as it is; a value that
// uses the client's variables is left alone; with --secrets a stdio
// entry's literal credential in env is replaced by its reference, and the
// plain values stay.
func TestRemoteHeadersAndSecrets(t *testing.T) {
	path := filepath.Join(t.TempDir(), ".claude.json")
	writeFile(t, path, remoteClaude)
	f := load(t, Location{Client: ClaudeCode, Path: path, Key: "mcpServers"})
	p, err := f.Plan(Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := decisions(p); got["tracker"] != KeepRemote || got["docs"] != Move || got["vars"] != KeepRemote || got["db"] != Move || len(p.Secrets) != 0 {
		t.Fatalf("without --secrets: %v %v", got, p.Secrets)
	}
	for _, d := range p.Decisions {
		if d.Name == "tracker" && !strings.Contains(d.Describe(), "hearthd adopt --secrets") {
			t.Fatalf("tracker: %s", d.Describe())
		}
	}
	if strings.Contains(string(p.New), "Authorization: Bearer sk-live") || strings.Count(string(p.New), "sk-live") != 1 {
		t.Fatal("a credential was written into arguments")
	}
	if !strings.Contains(string(p.New), `"args": ["run", "--name=docs", "--url", "https://docs.example/sse", "--header", "X-Api-Key: ${secret:docs-key}"]`) {
		t.Fatalf("docs:\n%s", p.New)
	}
	p, err = f.Plan(Options{Secrets: true, SecretName: func(proposed, value string) string { return proposed }})
	if err != nil {
		t.Fatal(err)
	}
	if got := decisions(p); got["tracker"] != Move || got["vars"] != KeepRemote {
		t.Fatalf("with --secrets: %v", got)
	}
	if len(p.Secrets) != 2 || p.Secrets[0].Name != "tracker-authorization" || p.Secrets[0].Value != "Bearer sk-live-0123456789" ||
		p.Secrets[1].Name != "db-db_password" || p.Secrets[1].Value != "hunter2" {
		t.Fatalf("secrets %+v", p.Secrets)
	}
	text := string(p.New)
	for _, want := range []string{
		`"--header", "Authorization: ${secret:tracker-authorization}", "--header", "X-Region: eu"`,
		`"DB_PASSWORD": "${secret:db-db_password}", "DB_HOST": "localhost"`,
	} {
		if !strings.Contains(text, want) {
			t.Fatalf("new text lacks %s:\n%s", want, text)
		}
	}
	if strings.Contains(text, "sk-live") || strings.Contains(text, "hunter2") {
		t.Fatalf("a credential is still in the file:\n%s", text)
	}
	again := load(t, Location{Client: ClaudeCode, Path: write(t, p.New), Key: "mcpServers"})
	for _, s := range again.Servers {
		if s.Name != "vars" && s.Kind != Hosted {
			t.Fatalf("%s is %v after the rewrite:\n%s", s.Name, s.Kind, p.New)
		}
	}
}
