// Package adopt moves the MCP servers a user's clients start themselves
// behind hearth: it finds the clients' config files, reads their server
// entries, plans the rewrite of each stdio entry into `hearth run -- ...`,
// and writes it with a backup beside the file, or undoes it from that
// backup. A file is changed only at the byte spans of the values that
// change (package jsonc finds them), so its comments, key order and
// indentation stay as the person who wrote it left them.
package adopt

import (
	"path/filepath"

	"github.com/hearth-mcp/hearth/pkg/jsonc"
)

// The clients whose configs adopt knows.
const (
	ClaudeCode    = "Claude Code"
	ClaudeDesktop = "Claude Desktop"
	Cursor        = "Cursor"
	VSCode        = "VS Code"
)

// Location is one config file a client may keep, and how to read it.
type Location struct {
	Client string
	Path   string
	// Key names the object that maps server names to entries.
	Key string
	// Syntax is what the client accepts in the file: VS Code's files are
	// JSONC; the others are JSON.
	Syntax jsonc.Options
	// Projects: the file also keeps per-project servers, under
	// "projects" -> path -> Key (Claude Code's ~/.claude.json).
	Projects bool
	// Project is the project directory of a project's own file, "" for a
	// user-level file.
	Project string
}

// Env is what locating the user's files reads of the environment.
type Env struct {
	Home   string
	Getenv func(string) string
}

// Locations lists the config files the clients may keep for this user and
// for each project directory given; whether each exists is for Load to say.
// Claude Desktop and VS Code are looked for in both their Linux and their
// macOS places, so a home that holds either is found on any system.
func Locations(env Env, projects []string) []Location {
	home := env.Home
	config := env.Getenv("XDG_CONFIG_HOME")
	if config == "" || !filepath.IsAbs(config) {
		config = filepath.Join(home, ".config")
	}
	appSupport := filepath.Join(home, "Library", "Application Support")
	claudeDir := home
	if d := env.Getenv("CLAUDE_CONFIG_DIR"); d != "" && filepath.IsAbs(d) {
		claudeDir = d
	}
	json, jsonc := jsonc.Options{}, jsonc.JSONC
	locs := []Location{
		{Client: ClaudeCode, Path: filepath.Join(claudeDir, ".claude.json"), Key: "mcpServers", Syntax: json, Projects: true},
		{Client: ClaudeDesktop, Path: filepath.Join(config, "Claude", "claude_desktop_config.json"), Key: "mcpServers", Syntax: json},
		{Client: ClaudeDesktop, Path: filepath.Join(appSupport, "Claude", "claude_desktop_config.json"), Key: "mcpServers", Syntax: json},
		{Client: Cursor, Path: filepath.Join(home, ".cursor", "mcp.json"), Key: "mcpServers", Syntax: json},
	}
	for _, code := range []string{"Code", "Code - Insiders"} {
		client := VSCode
		if code != "Code" {
			client += " Insiders"
		}
		locs = append(locs,
			Location{Client: client, Path: filepath.Join(config, code, "User", "mcp.json"), Key: "servers", Syntax: jsonc},
			Location{Client: client, Path: filepath.Join(appSupport, code, "User", "mcp.json"), Key: "servers", Syntax: jsonc})
	}
	for _, dir := range projects {
		locs = append(locs,
			Location{Client: ClaudeCode, Path: filepath.Join(dir, ".mcp.json"), Key: "mcpServers", Syntax: json, Project: dir},
			Location{Client: Cursor, Path: filepath.Join(dir, ".cursor", "mcp.json"), Key: "mcpServers", Syntax: json, Project: dir},
			Location{Client: VSCode, Path: filepath.Join(dir, ".vscode", "mcp.json"), Key: "servers", Syntax: jsonc, Project: dir})
	}
	return dedupe(locs)
}

// dedupe drops a location listed twice (a project given twice, or
// XDG_CONFIG_HOME pointing where another place already is).
func dedupe(locs []Location) []Location {
	seen := map[string]bool{}
	out := locs[:0]
	for _, l := range locs {
		key := filepath.Clean(l.Path)
		if seen[key] {
			continue
		}
		seen[key] = true
		out = append(out, l)
	}
	return out
}
