// Package adopt moves the MCP servers a user's clients start themselves
// behind hearth: it finds the clients' config files, reads their server
// entries, plans the rewrite of each stdio entry into `hearth run -- ...`,
// and writes it with a backup beside the file, or undoes it from that
// backup. A file is changed only at the byte spans of the values that
// change (package jsonc finds them), so its comments, key order and
// indentation stay as the person who wrote it left them.
package adopt

import (
	"path"
	"path/filepath"
	"runtime"
	"strings"

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
// On Unix, Claude Desktop and VS Code are looked for in both their Linux and
// their macOS places, so a home that holds either is found on any Unix; on
// Windows, in theirs (windowsLocations).
func Locations(env Env, projects []string) []Location {
	return LocationsOn(runtime.GOOS, env, projects)
}

// LocationsOn is Locations as on goos, so that every system's places are
// checked on any system: Unix's are joined with package path, Windows's
// by windowsLocations, whatever the host's separator.
func LocationsOn(goos string, env Env, projects []string) []Location {
	if goos == "windows" {
		return windowsLocations(env, projects)
	}
	home := env.Home
	config := env.Getenv("XDG_CONFIG_HOME")
	if config == "" || !path.IsAbs(config) {
		config = path.Join(home, ".config")
	}
	appSupport := path.Join(home, "Library", "Application Support")
	claudeDir := home
	if d := env.Getenv("CLAUDE_CONFIG_DIR"); d != "" && path.IsAbs(d) {
		claudeDir = d
	}
	json, jsonc := jsonc.Options{}, jsonc.JSONC
	locs := []Location{
		{Client: ClaudeCode, Path: path.Join(claudeDir, ".claude.json"), Key: "mcpServers", Syntax: json, Projects: true},
		{Client: ClaudeDesktop, Path: path.Join(config, "Claude", "claude_desktop_config.json"), Key: "mcpServers", Syntax: json},
		{Client: ClaudeDesktop, Path: path.Join(appSupport, "Claude", "claude_desktop_config.json"), Key: "mcpServers", Syntax: json},
		{Client: Cursor, Path: path.Join(home, ".cursor", "mcp.json"), Key: "mcpServers", Syntax: json},
	}
	for _, code := range []string{"Code", "Code - Insiders"} {
		client := VSCode
		if code != "Code" {
			client += " Insiders"
		}
		locs = append(locs,
			Location{Client: client, Path: path.Join(config, code, "User", "mcp.json"), Key: "servers", Syntax: jsonc},
			Location{Client: client, Path: path.Join(appSupport, code, "User", "mcp.json"), Key: "servers", Syntax: jsonc})
	}
	for _, dir := range projects {
		locs = append(locs,
			Location{Client: ClaudeCode, Path: path.Join(dir, ".mcp.json"), Key: "mcpServers", Syntax: json, Project: dir},
			Location{Client: Cursor, Path: path.Join(dir, ".cursor", "mcp.json"), Key: "mcpServers", Syntax: json, Project: dir},
			Location{Client: VSCode, Path: path.Join(dir, ".vscode", "mcp.json"), Key: "servers", Syntax: jsonc, Project: dir})
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

// windowsLocations are the clients' files on Windows: Claude Code's and
// Cursor's under the profile (env.Home, %USERPROFILE%) as elsewhere, Claude
// Desktop's and VS Code's under the roaming application data
// (%APPDATA%\Claude\claude_desktop_config.json, %APPDATA%\Code\User\mcp.json),
// %USERPROFILE%\AppData\Roaming when APPDATA is not an absolute path.
// Paths are joined with Windows's separator whatever system runs this.
func windowsLocations(env Env, projects []string) []Location {
	home := env.Home
	appData := env.Getenv("APPDATA")
	if !winAbs(appData) {
		appData = winJoin(home, "AppData", "Roaming")
	}
	claudeDir := home
	if d := env.Getenv("CLAUDE_CONFIG_DIR"); winAbs(d) {
		claudeDir = d
	}
	json, jsonc := jsonc.Options{}, jsonc.JSONC
	locs := []Location{
		{Client: ClaudeCode, Path: winJoin(claudeDir, ".claude.json"), Key: "mcpServers", Syntax: json, Projects: true},
		{Client: ClaudeDesktop, Path: winJoin(appData, "Claude", "claude_desktop_config.json"), Key: "mcpServers", Syntax: json},
		{Client: Cursor, Path: winJoin(home, ".cursor", "mcp.json"), Key: "mcpServers", Syntax: json},
		{Client: VSCode, Path: winJoin(appData, "Code", "User", "mcp.json"), Key: "servers", Syntax: jsonc},
		{Client: VSCode + " Insiders", Path: winJoin(appData, "Code - Insiders", "User", "mcp.json"), Key: "servers", Syntax: jsonc},
	}
	for _, dir := range projects {
		locs = append(locs,
			Location{Client: ClaudeCode, Path: winJoin(dir, ".mcp.json"), Key: "mcpServers", Syntax: json, Project: dir},
			Location{Client: Cursor, Path: winJoin(dir, ".cursor", "mcp.json"), Key: "mcpServers", Syntax: json, Project: dir},
			Location{Client: VSCode, Path: winJoin(dir, ".vscode", "mcp.json"), Key: "servers", Syntax: jsonc, Project: dir})
	}
	return dedupe(locs)
}

// winAbs: an absolute Windows path, with a drive (C:\ or C:/) or UNC (\\srv\share).
func winAbs(p string) bool {
	if strings.HasPrefix(p, `\\`) {
		return true
	}
	return len(p) >= 3 && p[1] == ':' && (p[2] == '\\' || p[2] == '/') && 'a' <= p[0]|0x20 && p[0]|0x20 <= 'z'
}

// winJoin joins with Windows's separator.
func winJoin(dir string, elem ...string) string {
	out := strings.TrimRight(dir, `\/`)
	for _, e := range elem {
		out += `\` + e
	}
	return out
}
