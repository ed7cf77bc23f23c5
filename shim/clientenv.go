package shim

import "strings"

// clientAdded lists the variables known MCP clients add to the environment
// of every stdio server they start, beyond their own environment and the
// entry's `env` (docs/decisions/0036-entry-environment.md, revised): a
// comparison with the client's environment takes them for the entry's.
// They are per session or per window, so keying a shared instance by them
// starts one upstream per session; the shim sends them apart (the run
// request's clientEnv) and the daemon passes them only under client
// sharing. Decision 0036's table lists the same.
var clientAdded = []struct {
	name   string // a variable, or a prefix ending in "_*"
	client string // who adds it
}{
	// Claude Code: observed in the environment of its stdio servers, none
	// in its own (decision 0036).
	{"CLAUDE_CODE_SESSION_ID", "Claude Code"},
	{"CLAUDECODE", "Claude Code"},
	{"AI_AGENT", "Claude Code"},
	{"CLAUDE_CODE_ENTRYPOINT", "Claude Code"},
	{"CLAUDE_PROJECT_DIR", "Claude Code"},
	{"COREPACK_ENABLE_AUTO_PIN", "Claude Code"},
	{"NoDefaultCurrentDirectoryInExePath", "Claude Code"},
	// Electron applications (VS Code, Cursor, Claude Desktop) set these in
	// the processes they fork (the extension host, utility processes), so a
	// server started from one carries them with the process's own values.
	{"ELECTRON_RUN_AS_NODE", "VS Code, Cursor, Claude Desktop"},
	{"ELECTRON_NO_ATTACH_CONSOLE", "VS Code, Cursor, Claude Desktop"},
	{"VSCODE_*", "VS Code, Cursor"},
	// The TypeScript and Python SDKs (and clients built on them, Codex's
	// allow-list of inherited variables too) add nothing: what they pass
	// comes from the client's own environment.
}

// ClientAdded reports whether name is a variable a known client adds to
// every server it starts.
func ClientAdded(name string) bool {
	for _, c := range clientAdded {
		if prefix, ok := strings.CutSuffix(c.name, "*"); ok {
			if strings.HasPrefix(name, prefix) {
				return true
			}
		} else if name == c.name {
			return true
		}
	}
	return false
}
