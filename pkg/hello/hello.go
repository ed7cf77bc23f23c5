// Package hello holds what the shim's $/hearth/hello carries for the daemon:
// the client's whereabouts, the shim's version and data directory, and the
// "run" member of `hearth run` (docs/protocol.md, "The shim's connection"
// and "Hosted servers"). The shim writes it and the daemon reads it with
// these types, so the two cannot drift apart. Standard library only: the
// shim links it.
package hello

import "encoding/json"

// Method is the hello's method, an internal one (only a shim over the
// daemon's socket may send it).
const Method = "$/hearth/hello"

// Hello is the params of the shim's $/hearth/hello, the first frame of
// every connection it opens.
type Hello struct {
	Cwd     string `json:"cwd"`      // the client's directory
	PID     int    `json:"pid"`      // the client's pid (the shim's parent)
	ShimPID int    `json:"shim_pid"` // the shim's own
	Version string `json:"version"`  // the shim's build
	Home    string `json:"home"`     // the data directory the shim resolved
	// Run, when present, asks for a hosted server: a Run, kept as its
	// text so that the daemon decodes it once, where it attaches the
	// server.
	Run json.RawMessage `json:"run,omitempty"`
}

// Run is what `hearth run` asks the daemon to host: a server of the config
// file by name, or a command. Env holds what the client's entry set for it
// (decision 0036); the shim never prints it.
type Run struct {
	Name    string            `json:"name,omitempty"`
	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	// URL is a remote server's MCP endpoint (hearth run --url): then
	// there is no Command. Headers ("Name: value", hearth run --header)
	// are sent with its every request; a value may name a stored secret
	// (${secret:NAME}).
	URL     string   `json:"url,omitempty"`
	Headers []string `json:"headers,omitempty"`
	// Sharing, when set (--share), overrides the sharing mode: global,
	// directory, client or exclusive.
	Sharing string `json:"sharing,omitempty"`
	// Entry is the name the client's own entry gives the server (--name,
	// which hearthd adopt writes): what status shows and what hearthd
	// servers restart|stop take. It is no part of the instance key.
	Entry string `json:"entry,omitempty"`
	// ClientEnv holds the variables the client adds to every server it
	// starts (the shim's ClientVarsOf): the daemon passes them only under client
	// sharing, and they are no part of the key (decision 0036).
	ClientEnv map[string]string `json:"clientEnv,omitempty"`
}
