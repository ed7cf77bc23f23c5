package shim

import (
	"io"

	"github.com/hearth-mcp/hearth/pkg/hello"
)

// Options configure a shim run.
type Options struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	Getenv func(string) string
	// Run, when set, asks the daemon to connect the client to a hosted
	// server instead of hearth's own tools (`hearth run`).
	Run *hello.Run
	// Relay makes the shim relay its client's frames instead of handing
	// its stdin and stdout to the daemon (pkg/portable's ShimRelay).
	Relay bool
}
