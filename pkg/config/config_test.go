package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hearth-mcp/hearth/pkg/config/keys"
)

// envOf is a getenv over a map.
func envOf(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

// withFile writes a config file and returns an environment naming it.
func withFile(t *testing.T, content string, extra ...string) (string, map[string]string) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{keys.ConfigVar: p}
	for i := 0; i+1 < len(extra); i += 2 {
		env[extra[i]] = extra[i+1]
	}
	return p, env
}

const secret = "sk-very-secret-123"

func TestBadConfigFiles(t *testing.T) {
	cases := []struct {
		name, content string
		want          []string // every one must be in the error
	}{
		{"unknown key", `frobnicate = 1`, []string{`unknown key "frobnicate"`}},
		{"misspelt key", `shemas_dir = "/x"`, []string{`unknown key "shemas_dir"`, `did you mean "schemas_dir"?`}},
		{"variable name as key", `SYN_SCHEMAS_DIR = "/x"`, []string{`did you mean "schemas_dir"?`}},
		{"table", "[daemon]\nlog_level = \"info\"", []string{`unknown key "daemon"`}},
		{"integer as string", `max_calls = "16"`, []string{"max_calls: want an integer, got a string"}},
		{"integer as float", `queue_depth = 1.5`, []string{"queue_depth: want an integer, got a float"}},
		{"duration as integer", `drain_timeout = 10`, []string{`drain_timeout: want a duration as a string such as "10s", got an integer`}},
		{"octal as integer", `socket_mode = 0o600`, []string{`socket_mode: want a string holding an octal permission such as "0600", got an integer`}},
		{"level as boolean", `log_level = true`, []string{"log_level: want a string", "got a boolean"}},
		{"boolean as string", `hosted_control = "true"`, []string{"hosted_control: want true or false, got a string"}},
		{"boolean as integer", `hosted_control = 1`, []string{"hosted_control: want true or false, got an integer"}},
		{"string as integer", `embed_model = 3`, []string{"embed_model: want a string, got an integer"}},
		{"path as array", `schemas_dir = ["/a"]`, []string{"schemas_dir: want a string, got an array"}},
		{"string as date", `llm_model = 1979-05-27`, []string{"llm_model: want a string, got a date or time"}},
		{"zero", `max_calls = 0`, []string{"max_calls: want an integer from 1 to 1024, got 0"}},
		{"negative", `max_children = -3`, []string{"max_children: want an integer from 1 to 1024, got -3"}},
		{"too large", `max_calls = 1025`, []string{"max_calls: want an integer from 1 to 1024, got 1025"}},
		{"zero batch", `max_batch = 0`, []string{"max_batch: want an integer of at least 1, got 0"}},
		{"bad duration", `kill_grace = "two seconds"`, []string{`kill_grace: want a duration from 1ms to 1m such as "2s", got "two seconds"`}},
		{"duration out of range", `kill_grace = "5m"`, []string{`kill_grace: want a duration from 1ms to 1m`}},
		{"negative duration", `drain_timeout = "-1s"`, []string{`drain_timeout: want a positive duration such as "10s", got "-1s"`}},
		{"zero duration", `llm_timeout = "0s"`, []string{`llm_timeout: want a positive duration`}},
		{"negative idle", `idle_timeout = "-5m"`, []string{`idle_timeout: want a duration such as "10m", or "0" for never`}},
		{"bad level", `log_level = "loud"`, []string{`log_level: want debug, info, warn or error, got "loud"`}},
		{"bad octal", `socket_mode = "0999"`, []string{`socket_mode: want an octal permission such as "0600", got "0999"`}},
		{"wide octal", `socket_mode = "7777"`, []string{`socket_mode: want an octal permission`}},
		{"syntax", "log_level = \"info\"\nmax_calls = = 3\n", []string{"line 2, column"}},
		{"unterminated string", "schemas_dir = \"/x\n", []string{"line 1, column"}},
		{"duplicate key", "max_calls = 3\nmax_calls = 4\n", []string{"line 2", "max_calls"}},
		{"secret of the wrong type", `llm_api_key = 12345`, []string{"llm_api_key: want a string, got an integer"}},
		{"syntax on a secret's line", "llm_api_key = \"" + secret + "\\q\"\n", []string{"line 1", "llm_api_key", "not shown"}},
		{"several problems", "max_calls = 0\nbogus = 1\n", []string{"max_calls:", `unknown key "bogus"`}},
		{"integer overflow", "log_level = \"info\"\nmax_calls = 99999999999999999999\n", []string{"line 2", "max_calls:", "too large"}},
		{"integer overflow in a table", "[servers.a]\ncommand = \"x\"\nidle_timeout = \"1m\"\nprestart = 99999999999999999999\n", []string{"line 4", "servers.a.prestart"}},
		{"http_listen not on loopback", `http_listen = "0.0.0.0:8765"`, []string{`http_listen: only a loopback address`, `got "0.0.0.0:8765"`}},
		{"http_listen without a port", `http_listen = "127.0.0.1"`, []string{`http_listen: want a loopback address and port such as "127.0.0.1:8765"`}},
		{"http_listen with a bad port", `http_listen = "127.0.0.1:99999"`, []string{`http_listen: the port must be a number from 0 to 65535`}},
		{"http_auth unknown", `http_auth = "password"`, []string{`http_auth: want "token"`, `got "password"`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, env := withFile(t, c.content)
			s, err := Load(envOf(env))
			if err == nil {
				t.Fatalf("loaded %v", s.Sources())
			}
			msg := err.Error()
			if !strings.Contains(msg, p) {
				t.Errorf("the error does not name the file: %s", msg)
			}
			for _, w := range c.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q lacks %q", msg, w)
				}
			}
			if strings.Contains(msg, secret) || strings.Contains(msg, "12345") {
				t.Errorf("the error echoes a secret: %s", msg)
			}
		})
	}
}

func TestUnusableFiles(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name string
		env  map[string]string
		want string
	}{
		{"named file missing", map[string]string{keys.ConfigVar: filepath.Join(dir, "nope.toml")}, "nope.toml (named by HEARTH_CONFIG) does not exist"},
		{"file is a directory", map[string]string{keys.ConfigVar: dir}, dir + " is a directory"},
	}
	big := filepath.Join(dir, "big.toml")
	os.WriteFile(big, []byte("# "+strings.Repeat("x", maxFile)+"\n"), 0o600)
	cases = append(cases, struct {
		name string
		env  map[string]string
		want string
	}{"file too large", map[string]string{keys.ConfigVar: big}, big + " is larger than"})
	notDir := filepath.Join(dir, "plain")
	os.WriteFile(notDir, nil, 0o600)
	cases = append(cases, struct {
		name string
		env  map[string]string
		want string
	}{"a path through a file", map[string]string{keys.ConfigVar: filepath.Join(notDir, "config.toml")}, "config file " + filepath.Join(notDir, "config.toml") + ": not a directory"})
	// A file another user may change is refused, whatever it says
	// (endpoint.OwnFile holds the table of owners and modes).
	open := filepath.Join(dir, "open.toml")
	os.WriteFile(open, []byte("max_calls = 3\n"), 0o600)
	os.Chmod(open, 0o666)
	cases = append(cases, struct {
		name string
		env  map[string]string
		want string
	}{"writable by others", map[string]string{keys.ConfigVar: open}, "config file refused: " + open + " has mode 0666: other users could write it"})
	if os.Getuid() == 0 {
		theirs := filepath.Join(dir, "theirs.toml")
		os.WriteFile(theirs, []byte("max_calls = 3\n"), 0o644)
		os.Chown(theirs, 65534, -1)
		cases = append(cases, struct {
			name string
			env  map[string]string
			want string
		}{"another user's", map[string]string{keys.ConfigVar: theirs}, "config file refused: " + theirs + " belongs to uid 65534"})
	}
	if os.Getuid() != 0 { // root reads anything
		locked := filepath.Join(dir, "locked.toml")
		os.WriteFile(locked, []byte("max_calls = 3\n"), 0o000)
		cases = append(cases, struct {
			name string
			env  map[string]string
			want string
		}{"unreadable", map[string]string{keys.ConfigVar: locked}, "config file " + locked + ": permission denied"})
		// The default location, unreadable: an error too, not silently no file.
		home := t.TempDir()
		os.MkdirAll(filepath.Join(home, ".config", "hearth"), 0o755)
		os.WriteFile(filepath.Join(home, ".config", "hearth", "config.toml"), []byte("max_calls = 3\n"), 0o000)
		cases = append(cases, struct {
			name string
			env  map[string]string
			want string
		}{"unreadable at the default location", map[string]string{"HOME": home}, "permission denied"})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, err := Load(envOf(c.env)); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("want an error containing %q, got %v", c.want, err)
			}
		})
	}
}

func TestPath(t *testing.T) {
	cases := []struct {
		name  string
		env   map[string]string
		want  string
		named bool
	}{
		{"HEARTH_CONFIG", map[string]string{keys.ConfigVar: "/etc/h.toml", "XDG_CONFIG_HOME": "/x", "HOME": "/h"}, "/etc/h.toml", true},
		// One file per user whatever XDG variables a client passes
		// (docs/decisions/0029-one-place-per-user.md).
		{"XDG_CONFIG_HOME is not consulted", map[string]string{"XDG_CONFIG_HOME": "/x", "HOME": "/h"}, "/h/.config/hearth/config.toml", false},
		{"relative XDG_CONFIG_HOME is ignored", map[string]string{"XDG_CONFIG_HOME": "x", "HOME": "/h"}, "/h/.config/hearth/config.toml", false},
		{"HOME", map[string]string{"HOME": "/h"}, "/h/.config/hearth/config.toml", false},
	}
	for _, c := range cases {
		p, named, err := Path(envOf(c.env))
		if err != nil || p != c.want || named != c.named {
			t.Errorf("%s: got %q named=%v err=%v, want %q named=%v", c.name, p, named, err, c.want, c.named)
		}
	}
	wd, _ := os.Getwd()
	if p, _, _ := Path(envOf(map[string]string{keys.ConfigVar: "rel.toml"})); p != filepath.Join(wd, "rel.toml") {
		t.Errorf("a relative HEARTH_CONFIG: %q", p)
	}
}

func TestMissingDefaultFileIsNoSettings(t *testing.T) {
	home := t.TempDir()
	s, err := Load(envOf(map[string]string{"HOME": home}))
	if err != nil {
		t.Fatal(err)
	}
	if p, read := s.File(); p != filepath.Join(home, ".config", "hearth", "config.toml") || read {
		t.Fatalf("File() = %q, %v", p, read)
	}
	for _, st := range s.Sources() {
		if st.Source != SourceDefault {
			t.Errorf("%s: source %q", st.Key, st.Source)
		}
	}
	if v := s.Getenv("HEARTH_MAX_CALLS"); v != "" {
		t.Errorf("a default reads as unset, got %q", v)
	}
}

func TestPrecedence(t *testing.T) {
	p, env := withFile(t, `
max_calls = 32
queue_depth = 64
log_level = "debug"
hosted_control = true
schemas_dir = "schemas"
examples_dir = "~/ex"
idle_timeout = "0"
`, "HEARTH_MAX_CALLS", "4", "HEARTH_LOG_LEVEL", "", "HOME", "/home/u", "MCP_SOCKET_PATH", "/s.sock")
	s, err := Load(envOf(env))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"HEARTH_MAX_CALLS":      "4",                                       // env over file
		"HEARTH_QUEUE_DEPTH":    "64",                                      // file
		"HEARTH_LOG_LEVEL":      "debug",                                   // an empty variable is unset
		"SYN_SCHEMAS_DIR":       filepath.Join(filepath.Dir(p), "schemas"), // relative to the file
		"SYN_EXAMPLES_DIR":      "/home/u/ex",                              // ~ is the home
		"HEARTH_IDLE_TIMEOUT":   "0",                                       // never
		"HEARTH_MAX_CHILDREN":   "",                                        // default: unset
		"MCP_SOCKET_PATH":       "/s.sock",                                 // not a setting: the environment
		"HEARTH_HOME":           "",                                        // not a setting, unset
		keys.ConfigVar:          p,                                         // idem
		"PREFLIGHTS_LLM_URL":    "",                                        // default: unset
		"MCP_SOCKET_MODE":       "",                                        // default: unset
		"HEARTH_DRAIN_TIMEOUT":  "",                                        // default: unset
		"HEARTH_HOSTED_CONTROL": "true",                                    // a boolean
	}
	for name, w := range want {
		if got := s.Getenv(name); got != w {
			t.Errorf("Getenv(%s) = %q, want %q", name, got, w)
		}
	}
	src := map[string]Setting{}
	for _, st := range s.Sources() {
		src[st.Key] = st
	}
	for key, w := range map[string]string{"max_calls": "env", "queue_depth": "file " + p, "log_level": "file " + p, "max_children": "default"} {
		if src[key].Source != w {
			t.Errorf("%s: source %q, want %q", key, src[key].Source, w)
		}
	}
	if st := src["max_children"]; st.Value != "8" || !st.Restart {
		t.Errorf("a default shows its value: %+v", st)
	}
	if src["schemas_dir"].Restart {
		t.Error("schemas_dir is applied on SIGHUP")
	}
	if len(s.Sources()) != len(keys.Settings) {
		t.Errorf("Sources lists %d settings, want %d", len(s.Sources()), len(keys.Settings))
	}
}

func TestSecretsRedacted(t *testing.T) {
	_, env := withFile(t, `
llm_api_key = "`+secret+`"
backend_url = "https://user:hunter2@backend.example/api"
embed_url = "http://localhost:11434"
`, "PREFLIGHTS_LLM_URL", "https://bob:pa55word@llm.example/v1")
	s, err := Load(envOf(env))
	if err != nil {
		t.Fatal(err)
	}
	if s.Getenv("PREFLIGHTS_LLM_API_KEY") != secret {
		t.Fatal("the daemon must still read the key")
	}
	all := ""
	for _, st := range s.Sources() {
		all += st.Key + "=" + st.Value + " "
		switch st.Key {
		case "llm_api_key":
			if st.Value != "(redacted)" {
				t.Errorf("llm_api_key shown as %q", st.Value)
			}
		case "backend_url":
			if st.Value != "https://user:xxxxx@backend.example/api" {
				t.Errorf("backend_url shown as %q", st.Value)
			}
		case "embed_url":
			if st.Value != "http://localhost:11434" {
				t.Errorf("embed_url shown as %q", st.Value)
			}
		}
	}
	for _, leak := range []string{secret, "hunter2", "pa55word"} {
		if strings.Contains(all, leak) {
			t.Errorf("Sources shows %q: %s", leak, all)
		}
	}
	// From the environment, too.
	s, _ = Load(envOf(map[string]string{"HOME": t.TempDir(), "PREFLIGHTS_LLM_API_KEY": secret}))
	for _, st := range s.Sources() {
		if st.Key == "llm_api_key" && (st.Value != "(redacted)" || st.Source != "env") {
			t.Errorf("env key: %+v", st)
		}
	}
	if err := Check("PREFLIGHTS_LLM_API_KEY", secret); err != nil {
		t.Error(err)
	}
}

func TestReload(t *testing.T) {
	p, env := withFile(t, "schemas_dir = \"/a\"\nmax_calls = 8\nllm_api_key = \"k1\"\n")
	s, err := Load(envOf(env))
	if err != nil {
		t.Fatal(err)
	}
	live := NewLive(s)
	getenv := live.Getenv // what the families hold

	// A bad file: an error naming the key; the caller keeps s.
	os.WriteFile(p, []byte("schemas_dir = \"/b\"\nmax_calls = \"many\"\n"), 0o600)
	if _, _, err := live.Settings().Reload(); err == nil || !strings.Contains(err.Error(), "max_calls") {
		t.Fatalf("bad file: %v", err)
	}
	if getenv("SYN_SCHEMAS_DIR") != "/a" || getenv("HEARTH_MAX_CALLS") != "8" {
		t.Fatal("a bad file changed the settings")
	}

	// A good one: schemas_dir applies; max_calls and the key wait for a restart.
	os.WriteFile(p, []byte("schemas_dir = \"/b\"\nmax_calls = 12\nllm_api_key = \"k2\"\n"), 0o600)
	next, changes, err := live.Settings().Reload()
	if err != nil {
		t.Fatal(err)
	}
	live.Store(next)
	if getenv("SYN_SCHEMAS_DIR") != "/b" {
		t.Errorf("schemas_dir not applied: %q", getenv("SYN_SCHEMAS_DIR"))
	}
	if getenv("HEARTH_MAX_CALLS") != "8" || getenv("PREFLIGHTS_LLM_API_KEY") != "k1" {
		t.Errorf("a restart setting changed under a running daemon")
	}
	got := map[string]Change{}
	for _, c := range changes {
		got[c.Key] = c
	}
	if len(changes) != 3 || got["schemas_dir"].Restart || !got["max_calls"].Restart || got["max_calls"].Old != "8" || got["max_calls"].New != "12" {
		t.Errorf("changes: %+v", changes)
	}
	if c := got["llm_api_key"]; !c.Restart || c.Old != "(redacted)" || c.New != "(redacted)" {
		t.Errorf("the key's change: %+v", c)
	}
	for _, st := range next.Sources() {
		if st.Key == "max_calls" && (st.Pending == nil || st.Pending.Value != "12" || st.Value != "8") {
			t.Errorf("max_calls: %+v", st)
		}
		if st.Key == "schemas_dir" && st.Pending != nil {
			t.Errorf("schemas_dir: %+v", st)
		}
	}

	// The same file again: nothing new to report; still pending.
	again, changes, err := next.Reload()
	if err != nil || len(changes) != 0 {
		t.Fatalf("no change: %v %v", changes, err)
	}
	if again.Getenv("HEARTH_MAX_CALLS") != "8" {
		t.Error("pending value applied on a second reload")
	}
	// Back to the running value: the pending change is gone, and reported.
	os.WriteFile(p, []byte("schemas_dir = \"/b\"\nmax_calls = 8\nllm_api_key = \"k1\"\n"), 0o600)
	back, changes, err := again.Reload()
	if err != nil || len(changes) != 2 {
		t.Fatalf("changes back: %+v %v", changes, err)
	}
	for _, st := range back.Sources() {
		if st.Pending != nil {
			t.Errorf("%s still pending", st.Key)
		}
	}
}

func TestHelpers(t *testing.T) {
	env := envOf(map[string]string{"HEARTH_MAX_CALLS": "0", "HEARTH_QUEUE_DEPTH": "9", "HEARTH_KILL_GRACE": "3s", "HEARTH_DRAIN_TIMEOUT": "soon"})
	if _, _, err := Int(env, "HEARTH_MAX_CALLS"); err == nil || err.Error() != `HEARTH_MAX_CALLS="0": want an integer from 1 to 1024` {
		t.Errorf("Int: %v", err)
	}
	if n, ok, err := Int(env, "HEARTH_QUEUE_DEPTH"); n != 9 || !ok || err != nil {
		t.Errorf("Int: %d %v %v", n, ok, err)
	}
	if _, ok, err := Int(env, "HEARTH_MAX_CHILDREN"); ok || err != nil {
		t.Errorf("unset: %v %v", ok, err)
	}
	if d, ok, err := Duration(env, "HEARTH_KILL_GRACE"); d.String() != "3s" || !ok || err != nil {
		t.Errorf("Duration: %v %v %v", d, ok, err)
	}
	if _, _, err := Duration(env, "HEARTH_DRAIN_TIMEOUT"); err == nil || !strings.Contains(err.Error(), "HEARTH_DRAIN_TIMEOUT") {
		t.Errorf("Duration: %v", err)
	}
}

func TestKeysAgree(t *testing.T) {
	if len(keys.SettingVars) != len(keys.Settings) || len(specs) != len(keys.Settings) {
		t.Fatal("keys.SettingVars, keys.Settings and specs differ in length")
	}
	seenKey, seenVar := map[string]bool{}, map[string]bool{}
	for i, k := range keys.Settings {
		if keys.SettingVars[i] != k.Var || !keys.IsSettingVar(k.Var) || seenKey[k.Key] || seenVar[k.Var] {
			t.Errorf("%+v", k)
		}
		seenKey[k.Key], seenVar[k.Var] = true, true
		if d := specs[i].def; d != "" {
			if err := specs[i].check(d); err != nil {
				t.Errorf("%s: default %q fails its own check: %v", k.Key, d, err)
			}
		}
	}
	for _, loc := range []string{"HEARTH_HOME", "MCP_SOCKET_PATH", "MCP_READY_FILE", "MCP_ENDPOINT", "HEARTH_CONFIG", "HEARTH_DAEMON", "HEARTH_NO_AUTOSTART", "HOME", "XDG_RUNTIME_DIR"} {
		if keys.IsSettingVar(loc) {
			t.Errorf("%s is a location, not a setting", loc)
		}
	}
}

// TestStoreURLRedacted: the store's connection string is shown without its
// password, in every form PostgreSQL accepts.
func TestStoreURLRedacted(t *testing.T) {
	const pw = "Sup3r-secret"
	for _, tc := range []struct{ in, want string }{
		{"postgres://hearth:" + pw + "@db.example:5432/hearth", "postgres://hearth:xxxxx@db.example:5432/hearth"},
		{"postgresql://hearth@db.example/hearth?password=" + pw + "&sslmode=require", "postgresql://hearth@db.example/hearth?password=xxxxx&sslmode=require"},
		{"host=db.example user=hearth password=" + pw + " dbname=hearth", "host=db.example user=hearth password=xxxxx dbname=hearth"},
		{"host=db.example password = '" + pw + " with \\' quote' dbname=hearth", "host=db.example password = xxxxx dbname=hearth"},
		{"host=/run/postgresql dbname=hearth", "host=/run/postgresql dbname=hearth"},
		{"postgres://hearth:" + pw + "@bad host/%zz", "(redacted: not a URL)"},
	} {
		if got := RedactDSN(tc.in); got != tc.want {
			t.Errorf("RedactDSN(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	_, env := withFile(t, `store_url = "host=db.example password=`+pw+` dbname=hearth"`)
	s, err := Load(envOf(env))
	if err != nil {
		t.Fatal(err)
	}
	if s.Getenv("HEARTH_STORE_URL") != "host=db.example password="+pw+" dbname=hearth" {
		t.Fatal("the daemon must still read the password")
	}
	for _, st := range s.Sources() {
		if strings.Contains(st.Value, pw) {
			t.Errorf("Sources shows the password: %+v", st)
		}
	}
	// A syntax error on its line does not quote the line.
	_, env = withFile(t, "store_url = \"postgres://u:"+pw+"@h/d\n")
	if _, err := Load(envOf(env)); err == nil || strings.Contains(err.Error(), pw) {
		t.Errorf("syntax error = %v", err)
	}
}
