package shim

import "strings"

// What MCP clients add to the environment of every stdio server they start,
// beyond their own environment and the entry's `env`
// (docs/decisions/0057-client-variables.md): a comparison with the client's
// environment takes it for the entry's. It is per session or per window
// (a session id, a directory of the session's notes), so keying a shared
// instance by it starts one upstream per session; the shim sends it apart
// (the run request's clientEnv) and the daemon passes it only under client
// sharing.
//
// A list of names breaks with the client's next release, so a client known
// by marks of its own owns whole namespaces: a shim whose environment holds
// one of its marks takes every variable of its namespaces for the client's.
// The names observed are kept too, whoever the client, for a client that
// leaves its marks out. An entry that sets a variable of such a namespace
// names it (`hearth run --env`, which `hearthd adopt` writes for every
// entry it moves): a named variable is always the entry's.
var knownClients = []struct {
	client string
	// marks: a variable the client sets on every server it starts, and
	// nothing else does.
	marks []string
	// owns: names, or prefixes ending in "*", of what it adds.
	owns []string
}{
	// Claude Code: its stdio servers' environment held CLAUDE_CODE_SESSION_ID,
	// CLAUDECODE, AI_AGENT, CLAUDE_CODE_ENTRYPOINT, CLAUDE_PROJECT_DIR,
	// COREPACK_ENABLE_AUTO_PIN and NoDefaultCurrentDirectoryInExePath
	// (2.1.197), and CLAUDE_CODE_CHILD_NOTES_DIR and
	// CLAUDE_CODE_LAUNCHED_BY_SESSION_IDS besides (2.1.332), none of them in
	// its own. test/claude_env_test.go runs the CLI and fails on a variable
	// this leaves unclassified.
	{"Claude Code", []string{"CLAUDECODE", "CLAUDE_CODE_SESSION_ID", "CLAUDE_CODE_ENTRYPOINT"},
		[]string{"CLAUDE_*", "CLAUDECODE*", "AI_AGENT", "COREPACK_ENABLE_AUTO_PIN", "NoDefaultCurrentDirectoryInExePath"}},
	// Electron applications (VS Code, Cursor, Claude Desktop) set these in
	// the processes they fork (the extension host, utility processes), so a
	// server started from one carries them with the process's own values.
	{"VS Code, Cursor, Claude Desktop", []string{"ELECTRON_RUN_AS_NODE", "VSCODE_PID", "VSCODE_IPC_HOOK", "VSCODE_CWD"},
		[]string{"ELECTRON_*", "VSCODE_*"}},
	// The TypeScript and Python SDKs (and clients built on them, Codex's
	// allow-list of inherited variables too) add nothing: what they pass
	// comes from the client's own environment.
}

// observed are the names seen added, whichever client sets them: they are
// the client's even where its marks are missing.
var observed = []string{
	"CLAUDE_CODE_SESSION_ID", "CLAUDECODE", "AI_AGENT", "CLAUDE_CODE_ENTRYPOINT", "CLAUDE_PROJECT_DIR",
	"COREPACK_ENABLE_AUTO_PIN", "NoDefaultCurrentDirectoryInExePath", "CLAUDE_CODE_CHILD_NOTES_DIR",
	"CLAUDE_CODE_LAUNCHED_BY_SESSION_IDS", "ELECTRON_RUN_AS_NODE", "ELECTRON_NO_ATTACH_CONSOLE", "VSCODE_*",
}

// ClientVars tells, for the environment a shim was started with, which of
// its variables a known client adds to every server it starts: the
// namespaces of each client whose marks it holds, and the names observed.
type ClientVars struct {
	owns []string
}

// ClientVarsOf is the rule for environ (NAME=VALUE strings).
func ClientVarsOf(environ []string) ClientVars {
	own := envMap(environ)
	cv := ClientVars{owns: observed}
	for _, c := range knownClients {
		for _, m := range c.marks {
			if _, ok := own[m]; ok {
				cv.owns = append(cv.owns[:len(cv.owns):len(cv.owns)], c.owns...)
				break
			}
		}
	}
	return cv
}

// Added reports whether name is one the client adds.
func (cv ClientVars) Added(name string) bool {
	for _, o := range cv.owns {
		if prefix, ok := strings.CutSuffix(o, "*"); ok {
			if strings.HasPrefix(name, prefix) {
				return true
			}
		} else if name == o {
			return true
		}
	}
	return false
}
