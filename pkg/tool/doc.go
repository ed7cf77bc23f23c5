// Package tool is the stable tool contract of hearth (docs/architecture.md, "The tool contract").
//
// A tool family declares its tools as [Tool] values; the daemon adds them to a
// [Registry], which checks each definition against the contract when it is added
// (an object input schema that forbids unknown properties, a schemaVersion, a
// handler) and validates every call's arguments before the handler runs.
//
// This package knows nothing of JSON-RPC or MCP framing. A handler sees only its
// arguments and the small [Call] it is handed (progress, logging, the client's
// directory); the protocol layer turns its result or [Error] into a reply.
package tool
