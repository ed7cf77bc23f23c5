//go:build unix

package test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// procEnviron is a process's environment as it started.
func procEnviron(t *testing.T, pid int) map[string]string {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]string{}
	for _, kv := range strings.Split(string(b), "\x00") {
		if k, v, ok := strings.Cut(kv, "="); ok {
			m[k] = v
		}
	}
	return m
}

// parentPid is a process's parent, from /proc/PID/stat.
func parentPid(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	ppid, _ := strconv.Atoi(f[1])
	return ppid
}

var pidOf = regexp.MustCompile(`pid=(\d+)`)

// echoPid calls the hosted test server's echo and returns its pid.
func echoPid(t *testing.T, cs *mcp.ClientSession) int {
	t.Helper()
	out, _ := callText(t, cs, "echo", map[string]any{"text": "who"})
	m := pidOf.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("echo: %q", out)
	}
	pid, _ := strconv.Atoi(m[1])
	return pid
}

// The first window's environment reaches no other window's server: a
// client holding a token autostarts the daemon; another window's `hearth
// run` of a server whose entry sets no token gets an upstream without it,
// with the documented base (HOME, USER, LOGNAME, SHELL, PATH led by the
// command's directory) and what its own entry named
// (docs/decisions/0042-upstream-environment.md).
func TestHostedUpstreamGetsNoOtherWindowsSecret(t *testing.T) {
	env, _, state := shimEnv(t)
	const secret = "window-a-token-7c1e"
	// Window A: the plain shim, autostarting the daemon with a secret.
	shimA := exec.Command(bin.hearth)
	shimA.Env = append(append([]string(nil), env...), "GITHUB_TOKEN="+secret, "AWS_SECRET_ACCESS_KEY="+secret)
	a := connectCommand(t, shimA, nil, "")
	if _, err := a.ListTools(t.Context(), nil); err != nil {
		t.Fatal(err)
	}
	// Window B: no token, an entry that names its own variable.
	b := runClientWith(t, append(append([]string(nil), env...), "HOSTED_TOKEN=b-own"), nil, "2025-11-25",
		[]string{"--env", "HOSTED_TOKEN", "--", filepath.Join(bin.dir, "hostedserver")})
	pid := echoPid(t, b)
	up := procEnviron(t, pid)
	// The daemon is the upstream's parent or, through the supervisor's
	// keeper process, its grandparent.
	var daemon map[string]string
	for p, i := parentPid(t, pid), 0; i < 3 && p > 1; p, i = parentPid(t, p), i+1 {
		if e := procEnviron(t, p); e["HEARTH_AUTOSTARTED"] == "1" {
			daemon = e
			break
		}
	}
	if daemon == nil {
		t.Fatal("no autostarted daemon above the upstream")
	}
	for name, e := range map[string]map[string]string{"upstream": up, "daemon": daemon} {
		for k, v := range e {
			if strings.Contains(v, secret) {
				t.Errorf("the %s holds window A's %s", name, k)
			}
		}
	}
	if up["HOSTED_TOKEN"] != "b-own" || up["HOME"] != state || up["USER"] == "" || up["USER"] != up["LOGNAME"] || up["SHELL"] == "" ||
		!strings.HasPrefix(up["PATH"], bin.dir+":") {
		t.Fatalf("the upstream's base: %v", up)
	}
	for k := range up {
		switch {
		case k == "HOME", k == "USER", k == "LOGNAME", k == "SHELL", k == "PATH", k == "LANG", k == "LANGUAGE", k == "TZ",
			k == "TMPDIR", strings.HasPrefix(k, "LC_"), k == "HOSTED_TOKEN",
			k == "PWD", // os/exec sets it to the working directory
			strings.HasSuffix(strings.ToUpper(k), "_PROXY"), k == "SSL_CERT_FILE", k == "SSL_CERT_DIR", k == "NODE_EXTRA_CA_CERTS":
		default:
			t.Errorf("the upstream has %s, which is neither the base nor its entry's", k)
		}
	}
}

// Claude Code gives every stdio server a new CLAUDE_CODE_SESSION_ID and
// variables of its own, none in its own environment: three sessions of one
// entry still share one upstream, which gets none of them; under client
// sharing each session's upstream gets its own (decision 0036, revised).
func TestHostedClientAddedVariablesShareOneInstance(t *testing.T) {
	env, _, _ := shimEnv(t)
	server := filepath.Join(bin.dir, "hostedserver")
	session := func(n int) []string {
		return append(append([]string(nil), env...), "CLAUDE_CODE_SESSION_ID=session-"+strconv.Itoa(n), "CLAUDECODE=1",
			"AI_AGENT=claude-code/"+strconv.Itoa(n), "CLAUDE_CODE_ENTRYPOINT=cli", "CLAUDE_PROJECT_DIR="+t.TempDir(),
			"COREPACK_ENABLE_AUTO_PIN=0", "NoDefaultCurrentDirectoryInExePath=1", "API_KEY=entry-set")
	}
	pids := map[int]bool{}
	for n := range 3 {
		pid := echoPid(t, runClient(t, session(n), nil, "2025-11-25", server))
		pids[pid] = true
		up := procEnviron(t, pid)
		if _, ok := up["CLAUDE_CODE_SESSION_ID"]; ok || up["API_KEY"] != "entry-set" {
			t.Fatalf("session %d's shared upstream: %v", n, up)
		}
	}
	raw := statusJSON(t, env)
	var st struct {
		Hosted []struct{ Key string } `json:"hosted"`
	}
	if err := json.Unmarshal(raw, &st); err != nil {
		t.Fatal(err)
	}
	if len(pids) != 1 || len(st.Hosted) != 1 {
		t.Fatalf("three sessions of one entry: upstreams %v, instances %s", pids, raw)
	}
	// Client sharing: each session's own upstream, with its own variables.
	for n := 3; n < 5; n++ {
		pid := echoPid(t, runClientWith(t, session(n), nil, "2025-11-25", []string{"--share", "client", "--", server}))
		up := procEnviron(t, pid)
		if pids[pid] || up["CLAUDE_CODE_SESSION_ID"] != "session-"+strconv.Itoa(n) || up["CLAUDECODE"] != "1" || up["API_KEY"] != "entry-set" {
			t.Fatalf("session %d under client sharing (pid %d): %v", n, pid, up)
		}
		pids[pid] = true
	}
}
