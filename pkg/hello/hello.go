// Package hello holds what the shim's $/hearth/hello carries for the daemon
// beyond the client's whereabouts: the "run" member of `hearth run`
// (docs/protocol.md, "Hosted servers"). The shim writes it and the daemon
// reads it with this one type, so the two cannot drift apart. Standard
// library only: the shim links it.
package hello

// Run is what `hearth run` asks the daemon to host: a server of the config
// file by name, or a command. Env holds what the client's entry set for it
// (decision 0036); the shim never prints it.
type Run struct {
	Name    string            `json:"name,omitempty"`
	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	// Sharing, when set (--share), overrides the sharing mode: global,
	// directory or client.
	Sharing string `json:"sharing,omitempty"`
	// ClientEnv holds the variables the client adds to every server it
	// starts (ClientAdded): the daemon passes them only under client
	// sharing, and they are no part of the key (decision 0036).
	ClientEnv map[string]string `json:"clientEnv,omitempty"`
}
