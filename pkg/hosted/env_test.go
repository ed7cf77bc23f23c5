package hosted

import (
	"slices"
	"strings"
	"testing"
)

// An upstream's environment is the base, the client's variables (client
// sharing) and the entry's, and nothing else of the daemon's: a secret in
// the environment of whichever client started the daemon reaches no
// upstream (docs/decisions/0042-upstream-environment.md).
func TestUpstreamEnv(t *testing.T) {
	daemon := map[string]string{
		"HOME": "/home/u", "USER": "window-user", "SHELL": "/bin/window-shell", "PATH": "/usr/bin:/opt/bin",
		"LANG": "de_DE.UTF-8", "LC_TIME": "C", "LC_ALL": "", "TZ": "Europe/Berlin", "TMPDIR": "/tmp/u",
		"GITHUB_TOKEN": "A", "AWS_SECRET_ACCESS_KEY": "s", "SSH_AUTH_SOCK": "/run/agent", "HEARTH_HOME": "/d",
		"MCP_SOCKET_PATH": "/r/s.sock", "XDG_RUNTIME_DIR": "/run/user/1", "TERM": "xterm", "HTTPS_PROXY": "http://proxy:3128",
	}
	var environ []string
	for k, v := range daemon {
		environ = append(environ, k+"="+v)
	}
	for _, tc := range []struct {
		name          string
		account       [2]string
		command       string
		client, entry []string
		want          []string
	}{
		{"the base only", [2]string{"u", "/bin/zsh"}, "/opt/node/bin/npx", nil, nil,
			[]string{"HOME=/home/u", "HTTPS_PROXY=http://proxy:3128", "LANG=de_DE.UTF-8", "LC_TIME=C", "LOGNAME=u", "PATH=/opt/node/bin:/usr/bin:/opt/bin",
				"SHELL=/bin/zsh", "TMPDIR=/tmp/u", "TZ=Europe/Berlin", "USER=u"}},
		{"the command's directory is not repeated", [2]string{"u", "/bin/zsh"}, "/usr/bin/uvx", nil, nil,
			[]string{"HOME=/home/u", "HTTPS_PROXY=http://proxy:3128", "LANG=de_DE.UTF-8", "LC_TIME=C", "LOGNAME=u", "PATH=/usr/bin:/opt/bin",
				"SHELL=/bin/zsh", "TMPDIR=/tmp/u", "TZ=Europe/Berlin", "USER=u"}},
		{"no account database: the daemon's own", [2]string{"", ""}, "srv", nil, nil,
			[]string{"HOME=/home/u", "HTTPS_PROXY=http://proxy:3128", "LANG=de_DE.UTF-8", "LC_TIME=C", "LOGNAME=window-user", "PATH=/usr/bin:/opt/bin",
				"SHELL=/bin/window-shell", "TMPDIR=/tmp/u", "TZ=Europe/Berlin", "USER=window-user"}},
		{"client then entry over the base", [2]string{"u", "/bin/zsh"}, "/s/srv",
			[]string{"CLAUDE_CODE_SESSION_ID=1", "TZ=UTC"}, []string{"GITHUB_TOKEN=B", "PATH=/mine", "TZ=Asia/Tokyo"},
			[]string{"CLAUDE_CODE_SESSION_ID=1", "GITHUB_TOKEN=B", "HOME=/home/u", "HTTPS_PROXY=http://proxy:3128", "LANG=de_DE.UTF-8", "LC_TIME=C", "LOGNAME=u",
				"PATH=/mine", "SHELL=/bin/zsh", "TMPDIR=/tmp/u", "TZ=Asia/Tokyo", "USER=u"}},
	} {
		b := baseEnv{
			getenv:  func(k string) string { return daemon[k] },
			environ: func() []string { return environ },
			account: func() (string, string) { return tc.account[0], tc.account[1] },
		}
		got := b.upstream(tc.command, tc.client, tc.entry)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, strings.Join(got, " "), strings.Join(tc.want, " "))
		}
	}
	// Without a PATH in the daemon's environment, a default after the
	// command's directory.
	b := baseEnv{getenv: func(k string) string { return map[string]string{"HOME": "/h"}[k] }, environ: func() []string { return nil },
		account: func() (string, string) { return "u", "" }}
	if got := b.upstream("/x/srv", nil, nil); !slices.Contains(got, "PATH=/x:"+defaultPath) || slices.ContainsFunc(got, func(kv string) bool { return strings.HasPrefix(kv, "SHELL=") }) {
		t.Errorf("no PATH, no shell: %v", got)
	}
}

// Only client sharing gives the upstream what the client adds, and the key
// never holds it: three sessions of one client with three session ids
// share one directory instance.
func TestClientEnvOnlyUnderClientSharing(t *testing.T) {
	for _, sharing := range []Sharing{Global, Directory, PerClient} {
		a := Spec{Command: "/s/srv", Env: []string{"TOKEN=t"}, ClientEnv: []string{"CLAUDE_CODE_SESSION_ID=1"}, Sharing: sharing}
		b := a
		b.ClientEnv = []string{"CLAUDE_CODE_SESSION_ID=2"}
		if a.Key("scope", "") != b.Key("scope", "") {
			t.Errorf("%s: the client's variables changed the key", sharing)
		}
		in := &Instance{spec: a}
		got := in.env()
		if has := slices.Contains(got, "CLAUDE_CODE_SESSION_ID=1"); has != (sharing == PerClient) || !slices.Contains(got, "TOKEN=t") {
			t.Errorf("%s: %v", sharing, got)
		}
	}
}
