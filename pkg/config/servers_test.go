package config

import (
	"strings"
	"testing"
	"time"
)

func TestServersTables(t *testing.T) {
	_, env := withFile(t, `
log_level = "info"
[servers.everything]
command = "npx"
args = ["-y", "@modelcontextprotocol/server-everything"]
env = { API_TOKEN = "`+secret+`" }
sharing = "global"
idle_timeout = "2m"
restart = "never"
[servers.fs]
command = "/usr/bin/mcp-fs"
cwd = "/srv"
[servers.tracker]
url = "https://mcp.example.com/mcp"
headers = { X-Api-Key = "${secret:tracker}" }
client_id = "hearth-1"
client_secret = "tracker-client"
`)
	s, err := Load(envOf(env))
	if err != nil {
		t.Fatal(err)
	}
	sv := s.Servers()
	e := sv["everything"]
	if e.Command != "npx" || strings.Join(e.Args, " ") != "-y @modelcontextprotocol/server-everything" || e.Env["API_TOKEN"] != secret ||
		e.Sharing != "global" || e.IdleTimeout != 2*time.Minute || e.Restart != "never" {
		t.Fatalf("everything: %+v", e)
	}
	if r := sv["tracker"]; r.URL != "https://mcp.example.com/mcp" || r.Headers["X-Api-Key"] != "${secret:tracker}" || r.ClientID != "hearth-1" || r.ClientSecret != "tracker-client" || r.Command != "" {
		t.Fatalf("tracker: %+v", r)
	}
	if f := sv["fs"]; f.Command != "/usr/bin/mcp-fs" || f.Cwd != "/srv" || f.Sharing != "" {
		t.Fatalf("fs: %+v", f)
	}
	if s.Getenv("HEARTH_LOG_LEVEL") == "" && len(sv) != 3 {
		t.Fatal("the other settings were lost")
	}
}

func TestBadServersTables(t *testing.T) {
	for _, tc := range []struct{ name, content, want string }{
		{"not a table", `servers = 3`, "servers: want tables [servers.NAME], got an integer"},
		{"no command", "[servers.x]\nargs = []", "servers.x.command: missing"},
		{"empty command", "[servers.x]\ncommand = \"\"", "servers.x.command: must not be empty"},
		{"args not strings", "[servers.x]\ncommand = \"a\"\nargs = [1]", "servers.x.args[0]: want a string, got an integer"},
		{"env not strings", "[servers.x]\ncommand = \"a\"\nenv = { TOKEN = 12345 }", "servers.x.env.TOKEN: want a string, got an integer"},
		{"bad sharing", "[servers.x]\ncommand = \"a\"\nsharing = \"everyone\"", `servers.x.sharing: want global, directory, client or exclusive, got "everyone"`},
		{"queue negative", "[servers.x]\ncommand = \"a\"\nqueue = -1", `servers.x.queue: want an integer from 0 to 1000, got -1`},
		{"queue a string", "[servers.x]\ncommand = \"a\"\nqueue = \"8\"", `servers.x.queue: want an integer from 0 to 1000, got a string`},
		{"max_instances zero", "[servers.x]\ncommand = \"a\"\nmax_instances = 0", `servers.x.max_instances: want an integer from 1 to 1000, got 0`},
		{"max_instances huge", "[servers.x]\ncommand = \"a\"\nmax_instances = 5000", `servers.x.max_instances: want an integer from 1 to 1000, got 5000`},
		{"bad idle", "[servers.x]\ncommand = \"a\"\nidle_timeout = \"soon\"", `servers.x.idle_timeout: want a positive duration`},
		{"bad restart", "[servers.x]\ncommand = \"a\"\nrestart = \"always\"", `servers.x.restart: want on-failure or never`},
		{"relative cwd", "[servers.x]\ncommand = \"a\"\ncwd = \"src\"", `servers.x.cwd: want an absolute path`},
		{"unknown key", "[servers.x]\ncommand = \"a\"\ncommnd = \"b\"", `servers.x.commnd: unknown key`},
		{"bad name", "[servers.\"a b\"]\ncommand = \"a\"", `servers.a b: a server's name is`},
		{"command and url", "[servers.x]\ncommand = \"a\"\nurl = \"https://h/mcp\"", `servers.x.url: a server has a command or a url, not both`},
		{"url not https", "[servers.x]\nurl = \"http://example.com/mcp\"", `servers.x.url: http:// only to a loopback address`},
		{"url relative", "[servers.x]\nurl = \"/mcp\"", `servers.x.url: want an absolute https:// URL`},
		{"url with args", "[servers.x]\nurl = \"https://h/mcp\"\nargs = [\"a\"]", `servers.x.url: a remote server takes no args`},
		{"headers not strings", "[servers.x]\nurl = \"https://h/mcp\"\nheaders = { Authorization = 12345 }", `servers.x.headers.Authorization: want a string`},
		{"bad header name", "[servers.x]\nurl = \"https://h/mcp\"\nheaders = { \"a b\" = \"v\" }", `servers.x.headers.a b: not a header name`},
		{"headers of a command", "[servers.x]\ncommand = \"a\"\nheaders = { X = \"v\" }", `servers.x.headers: headers and client_* are a remote server's`},
		{"client secret literal", "[servers.x]\nurl = \"https://h/mcp\"\nclient_id = \"c\"\nclient_secret = \"s3cr3t value!\"", `servers.x.client_secret: want the name of a stored secret`},
		{"client secret alone", "[servers.x]\nurl = \"https://h/mcp\"\nclient_secret = \"s\"", `servers.x.client_secret: only with client_id`},
	} {
		_, env := withFile(t, tc.content)
		_, err := Load(envOf(env))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %q", tc.name, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), "12345") {
			t.Errorf("%s: an env value in the error: %v", tc.name, err)
		}
	}
}
