// Package test holds hearth's end-to-end tests: they build the real binaries
// and drive them with real clients (the official MCP Go SDK, the official
// TypeScript SDK through node, and raw sockets for what no SDK would send).
//
// Every test file is built for Unix only: the suite drives the daemon's Unix
// socket and the shim, which do not serve on Windows yet
// (docs/decisions/0044-platforms.md). On macOS it compiles and is vetted in
// CI but has not been run.
package test
