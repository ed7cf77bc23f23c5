// Package shim is the `hearth` forwarder that MCP clients launch: it finds
// (or starts) the user's one hearthd, checks that the socket and the process
// behind it are the user's own, and relays newline-delimited JSON-RPC frames
// between the client's stdio and the daemon's socket.
//
// When the daemon goes away (crash, upgrade, restart) the shim reconnects,
// replays the client's initialize and initialized so the new daemon knows the
// session, answers every request that was in flight with an error saying it
// was lost and may be retried, and carries on; the client sees only frames.
//
// The shim stays small on purpose: no store, no schema library, no logger
// beyond a few stderr lines. Thousands may run at once.
package shim
