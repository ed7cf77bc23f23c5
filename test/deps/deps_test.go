// Package deps holds the import rules of the whole module in one table, in
// the manner of Go's go/build deps test: a statement of policy that makes
// docs/architecture.md's layers a test rather than a hope.
package deps

import (
	"errors"
	"fmt"
	"go/build"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
)

const module = "github.com/hearth-mcp/hearth"

// rules is the policy. Each statement "a, b < c, d;" says that c and d may
// import a and b and every package of the module a and b may import, so a
// package sits above the layers it names. Third-party modules and restricted
// standard packages are granted only where they are named: that pkg/supervisor
// may use os/exec lets no importer of it start processes. "NONE < p" lists a package that imports nothing
// governed here. "a !< p" forbids p to import a directly even where the
// layers below would allow it.
//
// Governed imports are the module's own packages (written without the module
// path), third-party modules (an import matches a module it equals or lies
// under), and the few standard packages with a policy of their own
// (restricted below). Other standard packages are free.
//
// Every package of the module must appear on the right of a "<": a new one
// fails the test until it is placed here, in the layer it belongs to.
const rules = `
# Standard library only.
NONE < pkg/version, pkg/stats, pkg/envelope, pkg/hello, pkg/frame, pkg/jsonval,
       pkg/config/keys, pkg/endpoint, pkg/safefile, pkg/jsonc, pkg/textedit,
       pkg/memory/store, pkg/memory/chunk, deploy/systemd, deploy/launchd, pkg/portable, pkg/webguard;

# Knowing a newer hearthd was installed, in a place only you and root change.
pkg/endpoint < pkg/upgrade;

# Replacing a file all at once: renameat2 and renamex_np to exchange two.
golang.org/x/sys < pkg/atomicfile;

# The daemon's local socket: listen, dial and the peer's identity, with the
# system's calls on the descriptor (the shim links it: no package net on
# Unix).
pkg/safefile, golang.org/x/sys < pkg/localsock;

# The system's process table (a keeper's descendant tracker reads it), and
# the one place that starts the daemon's child processes (x/sys: Job Objects
# on Windows).
golang.org/x/sys < pkg/proctable;
# The keeper, a program of its own the daemon's executable runs in a mode:
# it starts a hosted upstream and ends its every descendant; the protocol
# the supervisor speaks with it.
pkg/proctable < pkg/keeper;
os/exec, pkg/config/keys, pkg/keeper, golang.org/x/sys < pkg/supervisor;

# Opening a URL for the user (a sign-in page): a process that must outlive
# hearth (the browser it starts), so it is not the supervisor's.
os/exec < pkg/opener;

# Which program a hosted server's command names: a bare name on PATH, else
# a path; the shim and the daemon both resolve by it.
os/exec < pkg/command;

# Talking HTTP to a service the user configured: the schema backend, the LLM
# provider, the embedding service.
# The settings' defaults are pkg/config/keys', written once.
pkg/config/keys, net/http < pkg/schemas/backend, pkg/llm, pkg/memory/embed;

# The daemon process: the version guard (no store, no tool code: it runs
# before anything opens a store), the owner of a data directory, settings.
pkg/atomicfile, pkg/endpoint, pkg/safefile, golang.org/x/sys < pkg/guard, pkg/owner;
pkg/config/keys, pkg/endpoint, github.com/pelletier/go-toml < pkg/config;

# What a 2025 HTTP session negotiated, kept privately for the next daemon.
pkg/atomicfile, pkg/safefile < pkg/sessionkeep;

# Secrets at rest: sealed in the state directory, their key in the system's
# credential store (go-keyring: the Secret Service, the Keychain, the
# Credential Manager) or, where none runs, a 0600 key file.
pkg/atomicfile, pkg/endpoint, pkg/safefile, github.com/zalando/go-keyring, golang.org/x/sys < pkg/secret;

# MCP authorization: discovery, registration, sign-in, the token family of
# each remote server; its test servers.
net/http < pkg/oauth;
net/http < pkg/oauth/oauthtest;

# A remote MCP server as a hosted upstream: Streamable HTTP of both eras and
# the 2024-11-05 HTTP+SSE transport, authorized by pkg/oauth.
pkg/oauth, pkg/envelope, pkg/jsonrpc, pkg/version, net/http, go.uber.org/zap < pkg/remote;

# JSON, validation, JSON-RPC.
pkg/jsonval < pkg/repo, pkg/schemas/jsondiff;
# The id key and the envelope scan are pkg/envelope's, and the frame
# builders, ids, error objects and codes pkg/jsonrpc/wire's, which the
# shim links without a JSON decoder; pkg/jsonrpc's Parse is the decoder's.
pkg/envelope < pkg/jsonrpc/wire;
pkg/jsonval, pkg/jsonrpc/wire < pkg/jsonrpc;
pkg/jsonval, github.com/santhosh-tekuri/jsonschema, golang.org/x/text < pkg/validate;

# Non-blocking system calls that need not tell the scheduler.
golang.org/x/sys < pkg/rawio;

# What a shim and the daemon share once the client's stdio is handed over.
pkg/envelope, pkg/frame, pkg/jsonrpc/wire, pkg/rawio, golang.org/x/sys < pkg/handoff;

# The tool contract: what a family declares and a handler is handed. No
# processes, no repositories, no stores, no sessions.
pkg/validate, go.uber.org/zap < pkg/tool;

# The protocol layer: sessions over the contract. It knows no family and no
# argument of one.
pkg/config/keys, pkg/frame, pkg/hello, pkg/jsonrpc, pkg/stats, pkg/tool, go.uber.org/zap < pkg/mcp;

# Streamable HTTP: a transport plugging sessions into HTTP requests
# (docs/architecture.md, "The session in parts"), serving loopback clients.
pkg/mcp, pkg/envelope, pkg/sessionkeep, pkg/webguard, net/http, go.uber.org/zap < pkg/mcphttp;
# The local transports beside it: the socket, a shim's handed-over stdio
# (the direct transport) and a stdio daemon's own; the daemon wires them.
pkg/mcp, pkg/envelope, pkg/handoff, pkg/localsock, pkg/rawio, go.uber.org/zap, golang.org/x/sys < pkg/mcplocal;

# Families and the packages under them. Nothing here imports pkg/mcp,
# pkg/jsonrpc or pkg/frame (domain logic knows nothing of JSON-RPC), and the
# packages under a family do not import pkg/tool.
pkg/tool, pkg/safefile, pkg/schemas/backend, pkg/schemas/jsondiff, go.uber.org/zap < pkg/schemas;

golang.org/x/text < pkg/memory/terms;
pkg/memory/terms < pkg/memory/lexindex;
pkg/memory/store, pkg/memory/terms < pkg/memory/graphindex;
pkg/memory/graphindex < pkg/memory/graphwrite;
pkg/memory/store < pkg/memory/jsonl;
pkg/memory/store, pkg/llm < pkg/memory/extract;
pkg/memory/store, pkg/memory/lexindex, pkg/atomicfile, pkg/safefile < pkg/memory/rank;
pkg/memory/graphwrite, pkg/memory/rank, go.uber.org/zap < pkg/memory/storecore;
pkg/memory/storecore, github.com/google/uuid, github.com/jackc/pgx, go.uber.org/zap < pkg/memory/pgstore;
pkg/memory/storecore, pkg/safefile, github.com/google/uuid, database/sql, modernc.org/sqlite, go.uber.org/zap < pkg/memory/sqlitestore;
# pkg/memory is the one place that knows both engines, and makes an
# engine's refusal of its database the version guard's.
pkg/memory/pgstore, pkg/memory/sqlitestore, pkg/memory/chunk, pkg/memory/embed,
pkg/memory/extract, pkg/memory/jsonl, pkg/guard, pkg/tool, pkg/safefile, pkg/stats, go.uber.org/zap < pkg/memory;

pkg/tool, pkg/llm, pkg/repo, pkg/safefile, go.uber.org/zap < pkg/clarify;
pkg/atomicfile, pkg/safefile < pkg/workspace/index;
pkg/tool, pkg/repo, pkg/safefile, pkg/supervisor, pkg/workspace/index, go.uber.org/zap < pkg/workspace;

# Hosted MCP servers: children of the supervisor, whose frames are routed.
# A hosted server is the other kind of dispatcher a session plugs in
# (mcp.Dispatcher, docs/architecture.md, "The session in parts"):
# pkg/hosted's Session is the dispatcher, and the router writes to the
# session's mcp.Writer through route.Peer, the two-method interface it
# declares itself, so that neither sessions nor tools nor their schema
# library lie under it. pkg/mcp knows nothing of them.
pkg/envelope, pkg/jsonrpc < pkg/hosted/route;
pkg/mcp !< pkg/hosted/route;
pkg/hosted, pkg/hosted/route !< pkg/mcp;
# The catalog's storage: what each server answered, kept across restarts.
pkg/atomicfile, pkg/safefile < pkg/hosted/catalog;
pkg/endpoint, pkg/frame, pkg/hosted/catalog, pkg/hosted/route, pkg/mcp, pkg/rawio, pkg/repo, pkg/safefile, pkg/supervisor, go.uber.org/zap < pkg/hosted;

# The MCP servers clients left behind: found in the process table, named by
# hosted's rule of what a command runs.
pkg/hosted, pkg/proctable, golang.org/x/sys < pkg/sweep;

# What sharing saves, measured from the hosted servers' status and the
# process table; the status page that shows it, with the sweep's list.
pkg/hosted, pkg/mcp, pkg/proctable < pkg/savings;
pkg/hosted, pkg/mcp, pkg/savings, pkg/sweep, pkg/webguard, net/http < pkg/statuspage;

# Adopting an MCP client's configuration.
pkg/atomicfile, pkg/jsonc, pkg/textedit < pkg/adopt;

# Helpers for tests.
pkg/memory/store, pkg/memory/chunk, pkg/memory/terms, testing < pkg/memory/storetest, pkg/memory/internal/synth;
github.com/jackc/pgx, os/exec, testing < pkg/memory/pgstore/pgtest;
golang.org/x/sys, testing < pkg/safefile/safefiletest;

# The shim: no store, no schema library, no config parser (pkg/config/keys
# names the setting variables). It starts hearthd serve, which outlives it.
pkg/command, pkg/handoff, pkg/hello, pkg/owner, pkg/config/keys, pkg/portable, pkg/localsock, pkg/safefile, pkg/version, golang.org/x/sys, os/exec < shim;
shim, pkg/portable < shim/hearth;

# The daemon wires everything together; hearthd adds the subcommands (x/sys:
# on Windows, hearthd stop waits on the daemon's process handle).
pkg/command, pkg/mcp, pkg/mcphttp, pkg/mcplocal, pkg/sessionkeep, net/http, pkg/schemas, pkg/memory, pkg/clarify, pkg/workspace, pkg/config,
pkg/hello, pkg/localsock, pkg/supervisor, pkg/hosted, pkg/statuspage, pkg/remote, pkg/oauth, pkg/secret, pkg/opener, pkg/version, github.com/coreos/go-systemd, go.uber.org/zap, golang.org/x/sys < daemon;
daemon, shim, pkg/keeper, pkg/portable, pkg/localsock, pkg/guard, pkg/owner, pkg/adopt, pkg/sweep, pkg/opener, pkg/secret, pkg/upgrade, pkg/memory/jsonl, deploy/systemd, deploy/launchd, go.uber.org/zap, golang.org/x/sys, os/exec < daemon/hearthd;

# The release builder: it runs go build and git.
pkg/version, os/exec < tools/release;
# hearthd reaches the memory store only through pkg/memory's Engine.
pkg/memory/pgstore, pkg/memory/sqlitestore !< daemon/hearthd;

# The end-to-end tests and the benchmarks drive real binaries.
NONE < test, test/bench, test/deps, test/internal/rawping, test/internal/recordserver, test/bench/internal/catalogserver;
github.com/modelcontextprotocol/go-sdk, os/exec < test/internal/hostedserver;
github.com/modelcontextprotocol/go-sdk, os/exec < test/internal/leaver;
os/exec < test/bench/internal/benchtable;
# The conformance suite's client: hearth's remote packages, as hearth run --url will use them.
pkg/remote, pkg/oauth, pkg/oauth/oauthtest, pkg/opener, pkg/secret, os/exec < test/internal/remoteclient;
os/exec < test/bench/internal/linerelay;
github.com/modelcontextprotocol/go-sdk, github.com/wI2L/jsondiff < test/bench/internal/sdkserver;
`

// restricted are the standard packages with a policy of their own: only the
// packages the rules name may import them.
var restricted = []string{"os/exec", "net/http", "database/sql", "testing"}

// policy is the parsed table: what each package may import, and what it may
// not even so.
type policy struct {
	allow  map[string]map[string]bool
	forbid map[string]map[string]bool
	rule   map[string]string // the statement that places each package
	listed []string          // every package on the right of a "<", in order
}

func parseRules(text string) (*policy, error) {
	p := &policy{allow: map[string]map[string]bool{}, forbid: map[string]map[string]bool{}, rule: map[string]string{}}
	var lines []string
	for _, l := range strings.Split(text, "\n") {
		if i := strings.IndexByte(l, '#'); i >= 0 {
			l = l[:i]
		}
		lines = append(lines, l)
	}
	for _, stmt := range strings.Split(strings.Join(lines, " "), ";") {
		if strings.TrimSpace(stmt) == "" {
			continue
		}
		if lo, hi, ok := strings.Cut(stmt, "!<"); ok {
			for _, h := range names(hi) {
				if p.forbid[h] == nil {
					p.forbid[h] = map[string]bool{}
				}
				for _, l := range names(lo) {
					p.forbid[h][l] = true
				}
			}
			continue
		}
		lo, hi, ok := strings.Cut(stmt, "<")
		if !ok || strings.Contains(hi, "<") {
			return nil, fmt.Errorf("rule %q: want \"a, b < c, d\"", strings.TrimSpace(stmt))
		}
		below := map[string]bool{}
		for _, l := range names(lo) {
			if l == "NONE" {
				continue
			}
			below[l] = true
			for x := range p.allow[l] { // every package of the module l may import
				if own(x) {
					below[x] = true
				}
			}
		}
		for _, h := range names(hi) {
			if p.allow[h] != nil {
				return nil, fmt.Errorf("%s is placed twice: each package has one rule", h)
			}
			p.allow[h] = below
			p.rule[h] = strings.Join(strings.Fields(stmt), " ")
			p.listed = append(p.listed, h)
		}
	}
	return p, nil
}

// own reports whether a name in the rules is a package of the module.
func own(name string) bool {
	first, _, _ := strings.Cut(name, "/")
	return !strings.Contains(first, ".") && !slices.Contains(restricted, name)
}

func names(list string) []string {
	var out []string
	for _, f := range strings.Split(list, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// governed names an import as the rules do ("" when the rules leave it free):
// a module package without the module path, a third-party import as the
// module the rules name it by, a restricted standard package as it is.
func (p *policy) governed(imp string, modules []string) string {
	if imp == module || strings.HasPrefix(imp, module+"/") {
		return strings.TrimPrefix(strings.TrimPrefix(imp, module), "/")
	}
	if slices.Contains(restricted, imp) {
		return imp
	}
	first, _, _ := strings.Cut(imp, "/")
	if !strings.Contains(first, ".") {
		return "" // the standard library
	}
	for _, m := range modules {
		if imp == m || strings.HasPrefix(imp, m+"/") {
			return m
		}
	}
	return imp // a module no rule names: refused below
}

// modules are the third-party modules the rules name.
func (p *policy) modules() []string {
	seen := map[string]bool{}
	for _, below := range p.allow {
		for x := range below {
			first, _, _ := strings.Cut(x, "/")
			if strings.Contains(first, ".") {
				seen[x] = true
			}
		}
	}
	out := make([]string, 0, len(seen))
	for m := range seen {
		out = append(out, m)
	}
	return out
}

// violations checks one package's imports against the policy.
func (p *policy) violations(pkg string, imports []string) []string {
	allowed, ok := p.allow[pkg]
	if !ok {
		return []string{fmt.Sprintf("%s is not in the import rules: add it to the rules table in test/deps/deps_test.go, "+
			"in the layer it belongs to, with what it may import (\"pkg/a, pkg/b < %s;\")", pkg, pkg)}
	}
	var out []string
	mods := p.modules()
	for _, imp := range imports {
		g := p.governed(imp, mods)
		if g == "" || g == pkg {
			continue
		}
		switch {
		case p.forbid[pkg][g]:
			out = append(out, fmt.Sprintf("%s imports %s, which the import rules forbid it (\"%s !< %s\" in test/deps/deps_test.go)", pkg, g, g, pkg))
		case !allowed[g]:
			out = append(out, fmt.Sprintf("%s imports %s, which its layer may not: its import rule (test/deps/deps_test.go) is %q; "+
				"move the code, or change the rules if the layering should change (and docs/architecture.md with them)", pkg, g, p.rule[pkg]))
		}
	}
	return out
}

// modulePackages reads every package of the module (its non-test imports)
// for one GOOS, in process: the files it opens are what go test's cache
// watches, so a change of imports reruns the test.
func modulePackages(t *testing.T, root, goos string) map[string][]string {
	t.Helper()
	ctxt := build.Default
	ctxt.GOOS = goos
	pkgs := map[string][]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		name := d.Name()
		if path != root && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || name == "node_modules") {
			return filepath.SkipDir
		}
		bp, err := ctxt.ImportDir(path, 0)
		var noGo *build.NoGoError
		if errors.As(err, &noGo) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		rel, _ := filepath.Rel(root, path)
		if rel == "." {
			rel = ""
		}
		pkgs[filepath.ToSlash(rel)] = bp.Imports
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return pkgs
}

// TestImportRules checks every package of the module, as built for Linux,
// macOS and Windows, against the table.
func TestImportRules(t *testing.T) {
	p, err := parseRules(rules)
	if err != nil {
		t.Fatal(err)
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	seen, said := map[string]bool{}, map[string]bool{}
	for _, goos := range []string{"linux", "darwin", "windows"} {
		pkgs := modulePackages(t, root, goos)
		if len(pkgs) < 30 || pkgs["pkg/mcp"] == nil {
			t.Fatalf("implausible package list for %s: %d packages", goos, len(pkgs))
		}
		for _, pkg := range sortedKeys(pkgs) {
			seen[pkg] = true
			for _, v := range p.violations(pkg, pkgs[pkg]) {
				if !said[v] {
					said[v] = true
					t.Errorf("GOOS=%s: %s", goos, v)
				}
			}
		}
	}
	for _, pkg := range p.listed {
		if !seen[pkg] {
			t.Errorf("the import rules name %s, which is no package of the module: remove it from test/deps/deps_test.go", pkg)
		}
	}
}

func sortedKeys(m map[string][]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// The checker itself: a table of imports that break a rule, each with the
// message that names the rule.
func TestImportRulesCatchBreaks(t *testing.T) {
	p, err := parseRules(rules)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		pkg     string
		imports []string
		want    string // "" when allowed
	}{
		{"pkg/mcp", []string{module + "/pkg/tool", module + "/pkg/jsonval", "go.uber.org/zap/zapcore", "strings"}, ""},
		{"pkg/mcp", []string{module + "/pkg/repo"}, "pkg/mcp imports pkg/repo, which its layer may not"},
		{"pkg/tool", []string{module + "/pkg/supervisor"}, "pkg/tool imports pkg/supervisor"},
		{"pkg/memory/pgstore", []string{module + "/pkg/guard"}, "pkg/memory/pgstore imports pkg/guard"},
		{"pkg/workspace", []string{"os/exec"}, "pkg/workspace imports os/exec"},
		{"pkg/memory/lexindex", []string{module + "/pkg/tool"}, "pkg/memory/lexindex imports pkg/tool"},
		{"pkg/schemas", []string{module + "/pkg/mcp"}, "pkg/schemas imports pkg/mcp"},
		{"pkg/guard", []string{module + "/pkg/memory/store"}, "pkg/guard imports pkg/memory/store"},
		{"pkg/guard", []string{"database/sql"}, "pkg/guard imports database/sql"},
		{"shim", []string{module + "/pkg/config"}, "shim imports pkg/config"},
		{"shim", []string{module + "/pkg/jsonrpc"}, "shim imports pkg/jsonrpc"},
		{"pkg/handoff", []string{module + "/pkg/jsonval"}, "pkg/handoff imports pkg/jsonval"},
		{"pkg/hosted/route", []string{module + "/pkg/mcp"}, "pkg/hosted/route imports pkg/mcp"},
		{"pkg/frame", []string{module + "/daemon"}, "pkg/frame imports daemon"},
		{"pkg/envelope", []string{"github.com/example/new"}, "pkg/envelope imports github.com/example/new"},
		{"daemon/hearthd", []string{module + "/pkg/memory"}, ""},
		{"daemon/hearthd", []string{module + "/pkg/memory/pgstore"}, `forbid it ("pkg/memory/pgstore !< daemon/hearthd"`},
		{"pkg/newthing", nil, "pkg/newthing is not in the import rules: add it to the rules table"},
	} {
		got := strings.Join(p.violations(c.pkg, c.imports), "\n")
		if c.want == "" && got != "" || !strings.Contains(got, c.want) {
			t.Errorf("%s importing %v: %q, want %q", c.pkg, c.imports, got, c.want)
		}
	}
	for _, bad := range []string{"a < b < c;", "a;", "a < b; c < b;"} {
		if _, err := parseRules(bad); err == nil {
			t.Errorf("rules %q parsed", bad)
		}
	}
}

func TestMain(m *testing.M) {
	if _, err := os.Stat("../../go.mod"); err != nil {
		fmt.Fprintln(os.Stderr, "test/deps runs from its own directory in the module")
		os.Exit(1)
	}
	os.Exit(m.Run())
}

// The shim dials the daemon with system calls on the descriptor
// (pkg/localsock) and links no package net: with cgo, net brings libc's
// resolver, and the shim, which thousands may run, stays a static binary.
func TestShimLinksNoNet(t *testing.T) {
	for _, goos := range []string{"linux", "darwin"} {
		cmd := exec.Command("go", "list", "-deps", module+"/shim/hearth")
		cmd.Env = append(os.Environ(), "GOOS="+goos)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("GOOS=%s go list: %v", goos, err)
		}
		if slices.Contains(strings.Fields(string(out)), "net") {
			t.Errorf("GOOS=%s: the shim links package net (go list -deps ./shim/hearth)", goos)
		}
	}
}
