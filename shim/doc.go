// Package shim is the `hearth` program MCP clients launch: it finds (or
// starts) the user's one hearthd, checks that the socket and the process
// behind it are the user's own, and connects the client to it.
//
// When the client's stdin and stdout are pipes or sockets, the shim hands
// them to the daemon over the socket (descriptor passing, decision 0020 in
// docs/decisions): the daemon reads and writes the client's pipes itself and
// the shim waits, on a connection that carries control messages only.
// Otherwise it relays newline-delimited JSON-RPC frames between the client's
// stdio and the socket.
//
// When the daemon goes away (crash, upgrade, restart) the shim reconnects,
// replays the client's initialize and initialized so the new daemon knows the
// session, answers every request that was in flight with an error saying its
// reply was lost and it may or may not have been carried out, and carries on; the client sees only whole
// frames. Having handed its pipes over, it learns what was in flight from
// the memory it shares with the daemon (pkg/handoff), and hands the input the
// dead daemon had read but not taken in to the next one.
//
// The shim stays small on purpose: no store, no schema library, no logger
// beyond a few stderr lines. Thousands may run at once.
package shim
