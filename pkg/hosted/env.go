package hosted

import (
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hearth-mcp/hearth/pkg/endpoint"
)

// defaultPath is the PATH an upstream gets after its command's directory
// when the daemon has none.
const defaultPath = "/usr/local/bin:/usr/bin:/bin"

// baseEnv is where an upstream's base environment comes from: the daemon's
// variables and the account database (variables so tests can set them).
type baseEnv struct {
	getenv  func(string) string
	environ func() []string
	account func() (name, shell string)
}

var daemonBase = baseEnv{getenv: os.Getenv, environ: os.Environ, account: endpoint.Account}

// UpstreamEnv is the whole environment of an upstream running command: the
// base every upstream gets, then the variables a client adds to every server
// (client sharing only: the caller passes none otherwise), then the entry's
// (or config's) own over both. Nothing else of the daemon's environment
// reaches it, whichever client's environment the daemon was started with
// (docs/decisions/0042-upstream-environment.md).
func UpstreamEnv(command string, client, entry []string) []string {
	return daemonBase.upstream(command, client, entry)
}

// upstream builds UpstreamEnv's result; see Base for the base.
func (b baseEnv) upstream(command string, client, entry []string) []string {
	m := b.base(command)
	for _, list := range [][]string{client, entry} {
		for _, kv := range list {
			if k, v, ok := strings.Cut(kv, "="); ok && k != "" {
				m[k] = v
			}
		}
	}
	out := make([]string, 0, len(m))
	for k, v := range m {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

// base is the documented base of every upstream:
//   - HOME: the home every default place is under (decision 0029: $HOME when
//     absolute, else the account's);
//   - USER, LOGNAME, SHELL: the account's, from the account database, else
//     the daemon's own;
//   - PATH: the command's own directory first (an `npx` of a version manager
//     finds the `node` beside it), then the daemon's PATH, else a default;
//   - as the daemon has them (FromDaemon): the locale (LANG, LANGUAGE, LC_*),
//     TZ, TMPDIR, the proxies and the certificate variables.
func (b baseEnv) base(command string) map[string]string {
	m := map[string]string{}
	if home, err := endpoint.UserHome(b.getenv); err == nil {
		m["HOME"] = home
	}
	name, shell := b.account()
	if name == "" {
		name = b.getenv("USER")
		if name == "" {
			name = b.getenv("LOGNAME")
		}
	}
	if name != "" {
		m["USER"], m["LOGNAME"] = name, name
	}
	if shell == "" {
		shell = b.getenv("SHELL")
	}
	if shell != "" {
		m["SHELL"] = shell
	}
	m["PATH"] = upstreamPath(command, b.getenv("PATH"))
	for _, kv := range b.environ() {
		k, v, ok := strings.Cut(kv, "=")
		if ok && v != "" && FromDaemon(k) {
			m[k] = v
		}
	}
	return m
}

// FromDaemon reports whether an upstream takes the variable name from the
// daemon's environment: the locale, TZ, TMPDIR, and how the machine reaches
// the network (its proxies and the certificates it trusts, without which an
// `npx -y` or `uvx` behind a proxy fetches nothing). The shim passes the
// same to a daemon it starts.
func FromDaemon(name string) bool {
	switch name {
	case "LANG", "LANGUAGE", "TZ", "TMPDIR",
		"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "no_proxy", "all_proxy",
		"SSL_CERT_FILE", "SSL_CERT_DIR", "NODE_EXTRA_CA_CERTS":
		return true
	}
	return strings.HasPrefix(name, "LC_")
}

// upstreamPath is the command's directory (when the command is a path), then
// the daemon's PATH (or defaultPath), each directory once.
func upstreamPath(command, daemonPath string) string {
	if daemonPath == "" {
		daemonPath = defaultPath
	}
	var dirs []string
	seen := map[string]bool{}
	add := func(d string) {
		if d != "" && !seen[d] {
			seen[d] = true
			dirs = append(dirs, d)
		}
	}
	if filepath.IsAbs(command) {
		add(filepath.Dir(command))
	}
	for _, d := range filepath.SplitList(daemonPath) {
		add(d)
	}
	return strings.Join(dirs, string(filepath.ListSeparator))
}
