// Command recordserver is a stdio MCP server that records what its client
// sends it and the environment it was started with, for the end-to-end
// tests to learn what a real client (the Claude Code CLI) declares and
// passes: `recordserver DIR` writes DIR/env-PID (its environment, one
// NAME=VALUE per NUL) and DIR/frames-PID.jsonl (every frame it read, one a
// line, its answer to roots/list included). It answers initialize with
// the version the client asked for, lists one tool, refuses
// server/discover as a 2025 server does, and once initialized asks a
// client that declared roots for them.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: recordserver DIR")
		os.Exit(2)
	}
	dir := os.Args[1]
	pid := os.Getpid()
	if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("env-%d", pid)), []byte(strings.Join(os.Environ(), "\x00")), 0o600); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	frames, err := os.OpenFile(filepath.Join(dir, fmt.Sprintf("frames-%d.jsonl", pid)), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	out := bufio.NewWriter(os.Stdout)
	send := func(v any) {
		b, _ := json.Marshal(v)
		out.Write(append(b, '\n'))
		out.Flush()
	}
	var roots bool
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Bytes()
		frames.Write(append(append([]byte(nil), line...), '\n'))
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				ProtocolVersion string                     `json:"protocolVersion"`
				Capabilities    map[string]json.RawMessage `json:"capabilities"`
			} `json:"params"`
		}
		if json.Unmarshal(line, &m) != nil {
			continue
		}
		answer := func(result any) { send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": result}) }
		switch m.Method {
		case "initialize":
			_, roots = m.Params.Capabilities["roots"]
			answer(map[string]any{"protocolVersion": m.Params.ProtocolVersion, "capabilities": map[string]any{"tools": map[string]any{}},
				"serverInfo": map[string]any{"name": "recordserver", "version": "1"}})
		case "notifications/initialized":
			if roots {
				send(map[string]any{"jsonrpc": "2.0", "id": "recordserver-roots", "method": "roots/list"})
			}
		case "tools/list":
			answer(map[string]any{"tools": []any{map[string]any{"name": "noop", "inputSchema": map[string]any{"type": "object"}}}})
		case "ping":
			answer(map[string]any{})
		case "":
		default:
			if m.ID != nil {
				send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{"code": -32601, "message": "Method not found: " + m.Method}})
			}
		}
	}
}
