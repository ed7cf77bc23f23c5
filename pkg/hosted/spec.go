// Package hosted owns the instances of hosted MCP servers (docs/architecture.md,
// "Hosted servers"): the table of instances by key, their lifecycle (lazy
// start on the first client, idle stop after the last, restart with backoff
// after a crash, a crash loop marked failed with the last lines of its
// stderr), each instance's capped stderr log, and one route.Router per
// instance. Child processes are started by pkg/supervisor, in a process group
// of their own with the parent-death signal, and stopped with SIGTERM to the
// group, then SIGKILL after the grace.
package hosted

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Sharing is how an instance is shared among clients.
type Sharing string

// The sharing modes (docs/decisions/0032-hosted-instance-key.md).
const (
	// Global: one instance per user.
	Global Sharing = "global"
	// Directory: one instance per client directory, run in that very
	// directory as a direct spawn would be (the default: many servers read
	// their working directory or name files relative to it).
	Directory Sharing = "directory"
	// PerClient: one instance per client connection, nothing shared, every
	// request passed through; for stateful servers such as browsers.
	PerClient Sharing = "client"
	// Exclusive: one instance per user, serving one client at a time; the
	// others wait their turn in a bounded queue (gate.go,
	// docs/decisions/0074-exclusive-and-capped-servers.md).
	Exclusive Sharing = "exclusive"
)

// DefaultQueue is how many clients may wait for an exclusive server, or
// for an instance of a capped one, when the config does not say.
const DefaultQueue = 8

// ParseSharing reads a sharing mode ("" is the default, directory).
func ParseSharing(s string) (Sharing, error) {
	switch Sharing(s) {
	case "":
		return Directory, nil
	case Global, Directory, PerClient, Exclusive:
		return Sharing(s), nil
	}
	return "", fmt.Errorf("sharing %q: want global, directory, client or exclusive", s)
}

// Restart policies.
const (
	RestartOnFailure = "on-failure" // the default: restart on the next request, with backoff
	RestartNever     = "never"      // an upstream that exits is failed until restarted by hand
)

// Defaults.
const (
	// DefaultIdleTimeout is short: a server with a catalog entry costs a
	// client nothing to attach to while it is stopped, so one nobody uses
	// need not keep running (docs/decisions/0045-hosted-catalog.md).
	DefaultIdleTimeout = time.Minute
	DefaultInitTimeout = 30 * time.Second
	// crashLoop consecutive failed starts mark an instance failed.
	crashLoop = 5
	// steadyRun is how long an upstream must run to count as started well:
	// its next failure starts a new count.
	steadyRun = 10 * time.Second
)

// Spec is what to run: a [servers.NAME] table of the config file, or a
// client's inline `hearth run -- COMMAND ARGS...`.
type Spec struct {
	Name string // the config's name; "" for an inline command
	// Entry is the name the client's own entry gives the server (hearth
	// run --name): what the user calls it. It is no part of the key:
	// entries of one command under two names share an instance, known by
	// both.
	Entry   string
	Command string // the program, resolved to an absolute path when found on PATH
	// URL is a remote server's MCP endpoint (pkg/remote): then there is no
	// Command, and Options.Remote connects to it.
	URL string
	// Headers are sent with every request to a remote server, "Name:
	// value" (static keys): secrets as far as hearth knows, as Env is.
	Headers []string
	// Client is the pre-registered OAuth client of a remote server's entry
	// (its secret a stored secret's name, never the value).
	Client RemoteClient
	Args   []string //
	// Env is what the client's entry (or the config) sets, NAME=VALUE; the
	// upstream gets a fixed base with these over it (UpstreamEnv). Values are
	// secrets as far as hearth knows: they go into the key's hash, never into
	// a log or a status.
	Env []string
	// Dir is the config's cwd (always absolute): where the upstream runs
	// whatever the sharing. "" is the client's directory (directory,
	// client) or the home directory (global).
	Dir     string
	Sharing Sharing
	// IdleTimeout: how long an instance without clients stays (0: the default).
	IdleTimeout time.Duration
	InitTimeout time.Duration // 0: the default
	// AnswerTimeout: how long a client has to answer the server's request
	// of it (0: route.DefaultAnswerTimeout).
	AnswerTimeout time.Duration
	Restart       string        // RestartOnFailure (""), RestartNever
	Grace         time.Duration // SIGTERM-to-SIGKILL grace (0: the supervisor's)
	// ClientEnv is what the client adds to every server it starts (a session
	// id and such, decision 0036): passed only under client sharing, never
	// part of the key.
	ClientEnv []string
	// Prestart: start the upstream with the instance, even when the
	// catalog answers its clients; NoCatalog: never answer from the
	// catalog (docs/decisions/0045-hosted-catalog.md).
	Prestart, NoCatalog bool
	// Queue bounds the clients waiting for an exclusive server or a
	// capped one's instance (0: DefaultQueue; negative: none wait, they
	// are refused at once); MaxInstances caps the instances running at
	// once (0: none).
	Queue, MaxInstances int
}

// queue is the bound of the clients waiting at the spec's gate.
func (s Spec) queue() int {
	switch {
	case s.Queue == 0:
		return DefaultQueue
	case s.Queue < 0:
		return 0
	}
	return s.Queue
}

// RemoteClient is a pre-registered OAuth client: its id, its secret's
// name in the vault ("" for a public client) and, optionally, the issuer
// it is registered with.
type RemoteClient struct {
	ID     string `json:"id,omitempty"`
	Secret string `json:"secret,omitempty"`
	Issuer string `json:"issuer,omitempty"`
}

// Label names the server for people: its config name, else its command and
// arguments, those that may be secrets redacted (RedactArgs).
func (s Spec) Label() string {
	if s.Name != "" {
		return s.Name
	}
	if s.IsRemote() {
		return RemoteLabel(s.URL)
	}
	parts := append([]string{baseName(s.Command)}, RedactArgs(s.Args)...)
	return elide(strings.Join(parts, " "), 80)
}

// elide shortens s to at most max runes by cutting out its middle: the
// command at the start and the script or package at the end are what tell
// servers apart (a long directory in between is not).
func elide(s string, max int) string {
	r := []rune(s)
	if len(r) <= max {
		return s
	}
	head := (max - 1) / 3
	tail := max - 1 - head
	return string(r[:head]) + "…" + string(r[len(r)-tail:])
}

// EnvNames are the names of the variables the spec sets (no values).
func (s Spec) EnvNames() []string {
	names := make([]string, 0, len(s.Env))
	for _, kv := range s.Env {
		name, _, _ := strings.Cut(kv, "=")
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// Scope is the part of an instance's key that is not the spec: the
// client's directory for a directory instance, exactly as the client started
// `hearth run` there (not the repository holding it: two windows in two
// subdirectories run a server that reads its directory in two places), the
// connection of a client one.
func (s Spec) Scope(clientDir string, conn uint64) string {
	switch s.Sharing {
	case Global, Exclusive:
		return ""
	case PerClient:
		return fmt.Sprintf("connection %d", conn)
	}
	if clientDir == "" {
		return ""
	}
	return filepath.Clean(clientDir)
}

// Key is the instance key: a hash of the resolved command, its arguments,
// the environment the entry set, the working directory, the sharing mode,
// the scope (decision 0032) and the shape of its clients (route.Shape,
// docs/decisions/0056-client-shape.md). Two windows of one client with the
// same entry share an instance; an entry that sets another token, or a
// client that declares other capabilities, gets its own. Key(scope, "")
// is the instance's base: what a 2026-07-28 upstream serving every shape
// is keyed by.
func (s Spec) Key(scope, shape string) string {
	h := sha256.New()
	field := func(v string) { fmt.Fprintf(h, "%d:%s\x00", len(v), v) }
	field(s.Name)
	field(s.Command)
	field(fmt.Sprint(len(s.Args)))
	for _, a := range s.Args {
		field(a)
	}
	env := slices.Clone(s.Env)
	slices.Sort(env)
	field(fmt.Sprint(len(env)))
	for _, kv := range env {
		field(kv)
	}
	if s.IsRemote() {
		// Only a remote spec's: the keys of commands stay what they were.
		field("url " + s.URL)
		headers := slices.Clone(s.Headers)
		slices.Sort(headers)
		field(fmt.Sprint(len(headers)))
		for _, h := range headers {
			field(h)
		}
		field(s.Client.ID)
		field(s.Client.Secret)
	}
	field(s.Dir)
	field(string(s.Sharing))
	field(scope)
	field(shape)
	return hex.EncodeToString(h.Sum(nil))[:16]
}
