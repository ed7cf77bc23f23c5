// Package test holds hearth's end-to-end tests: they build the real binaries
// and drive them with real clients (the official MCP Go SDK, the official
// TypeScript SDK through node, and raw sockets for what no SDK would send).
package test
