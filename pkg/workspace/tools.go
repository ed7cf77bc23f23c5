package workspace

import (
	"encoding/json"
	"time"

	"github.com/hearth-mcp/hearth/pkg/tool"
)

// Limits of the tools' arguments and results.
const (
	searchLimitDefault  = 20
	searchLimitMax      = 200
	contextLinesDefault = 2
	contextLinesMax     = 10
	// showFileMaxBytes bounds show_file's text (with its line numbers).
	showFileMaxBytes = 1 << 20
	// buildTimeout is index_build's default time limit; timeout_ms may ask
	// for up to buildTimeoutMax.
	buildTimeout    = 10 * time.Minute
	buildTimeoutMax = time.Hour
)

const repoPathProp = `"repo_path": {"type": "string", "minLength": 1, "maxLength": 4096,
	"description": "The repository's directory (absolute, or relative to the client's directory). Default: the client's directory walked up to the nearest .git."}`

// repoNote ends the description of every tool that works on a repository:
// where it comes from without repo_path, and when repo_path is needed.
const repoNote = " Without repo_path the repository is the client's directory walked up to .git: its MCP roots, or the directory it " +
	"started hearth in (the hearth shim or hearthd stdio). A client that declares no roots and reaches hearth another way must pass repo_path."

var indexBuildSchema = json.RawMessage(`{
	"$schema": "https://json-schema.org/draft/2020-12/schema",
	"type": "object",
	"additionalProperties": false,
	"properties": {
		` + repoPathProp + `,
		"incremental": {"type": "boolean", "default": true,
			"description": "Take files whose size and modification time are unchanged from the existing index instead of reading them again (default true). false rebuilds from scratch."},
		"timeout_ms": {"type": "integer", "minimum": 1, "maximum": 3600000,
			"description": "Time limit of this build in milliseconds (default 600000). On expiry the build is stopped, its processes are killed and the previous index stays."}
	}
}`)

var repoOnlySchema = json.RawMessage(`{
	"$schema": "https://json-schema.org/draft/2020-12/schema",
	"type": "object",
	"additionalProperties": false,
	"properties": {
		` + repoPathProp + `
	}
}`)

var searchSchema = json.RawMessage(`{
	"$schema": "https://json-schema.org/draft/2020-12/schema",
	"type": "object",
	"additionalProperties": false,
	"required": ["query"],
	"properties": {
		"query": {"type": "string", "minLength": 1, "maxLength": 1000,
			"description": "What to find: literal text, or an RE2 regular expression when regex is true. Matches never span lines."},
		` + repoPathProp + `,
		"regex": {"type": "boolean", "default": false,
			"description": "Treat query as an RE2 regular expression (Go syntax: no backreferences or lookaround; ^ and $ match at line ends). Default false: literal text."},
		"case_sensitive": {"type": "boolean", "default": false,
			"description": "Match letter case exactly (default false: case is ignored)."},
		"path_glob": {"type": "string", "minLength": 1, "maxLength": 1000,
			"description": "Only files whose path matches this glob: *, ?, **, [abc], {a,b}. Without '/' it matches the file name in any directory (*.go); with '/' the path from the repository root (pkg/**/*_test.go)."},
		"limit": {"type": "integer", "minimum": 1, "maximum": 200, "default": 20,
			"description": "Most hits to return (default 20, at most 200); one hit per matching line."},
		"context_lines": {"type": "integer", "minimum": 0, "maximum": 10, "default": 2,
			"description": "Lines of context before and after each hit (default 2, at most 10)."}
	}
}`)

var showFileSchema = json.RawMessage(`{
	"$schema": "https://json-schema.org/draft/2020-12/schema",
	"type": "object",
	"additionalProperties": false,
	"required": ["path"],
	"properties": {
		"path": {"type": "string", "minLength": 1, "maxLength": 4096,
			"description": "The file, relative to the repository root (as search returns it). Absolute paths, '..' and symbolic links leading out of the repository are refused."},
		` + repoPathProp + `,
		"start_line": {"type": "integer", "minimum": 1,
			"description": "First line to show, 1-based (default 1)."},
		"end_line": {"type": "integer", "minimum": 1,
			"description": "Last line to show, inclusive (default: the end of the file). At most 1 MiB of text is returned either way."}
	}
}`)

var checkStatusSchema = json.RawMessage(`{
	"$schema": "https://json-schema.org/draft/2020-12/schema",
	"type": "object",
	"additionalProperties": false,
	"properties": {}
}`)

// Tools lists the family's tools.
func (f *Family) Tools() []tool.Tool {
	readOnly := tool.Annotations{ReadOnly: true, Idempotent: true}
	return []tool.Tool{
		{
			Name:  "index_build",
			Title: "Build the code index",
			Description: "Index a repository's text files for search: git's tracked and untracked-but-not-ignored files in a work tree, " +
				"else every file except .git and node_modules; binary files and files over 1 MiB are skipped. Runs as a supervised " +
				"process with progress (files done of total); incremental by default. A cancelled, timed-out or failed build leaves the previous index." + repoNote,
			InputSchema:   indexBuildSchema,
			SchemaVersion: 2, // 2: the description says where the repository comes from without repo_path
			Annotations:   tool.Annotations{Idempotent: true},
			Timeout:       buildTimeout,
			TimeoutArg:    "timeout_ms",
			ClientDir:     true,
			Handler:       f.indexBuild,
		},
		{
			Name:          "index_status",
			Title:         "Index status",
			Description:   "Whether a repository has an index, when it was built, its size, the git HEAD it was built at, and the files added, modified or deleted since." + repoNote,
			InputSchema:   repoOnlySchema,
			SchemaVersion: 2, // 2: the description says where the repository comes from without repo_path
			Annotations:   readOnly,
			ClientDir:     true,
			Handler:       f.indexStatus,
		},
		{
			Name:  "search",
			Title: "Search code",
			Description: "Find lines in a repository's indexed files: literal text or an RE2 regular expression, case-insensitive by default, " +
				"optionally limited to a path glob. Each hit has path, line, column, text and context lines. Needs index_build first (NO_INDEX otherwise); " +
				"results reflect the files as of the last build." + repoNote,
			InputSchema:   searchSchema,
			SchemaVersion: 2, // 2: the description says where the repository comes from without repo_path
			Annotations:   readOnly,
			Timeout:       30 * time.Second,
			ClientDir:     true,
			Handler:       f.search,
		},
		{
			Name:          "show_file",
			Title:         "Show a file",
			Description:   "A repository file's current text with line numbers, optionally a line range; at most 1 MiB. Binary files and paths leaving the repository are refused." + repoNote,
			InputSchema:   showFileSchema,
			SchemaVersion: 2, // 2: the description says where the repository comes from without repo_path
			Annotations:   readOnly,
			ClientDir:     true,
			Handler:       f.showFile,
		},
		{
			Name:          "check_status",
			Title:         "Workspace capabilities",
			Description:   "What the workspace tools can do here: git present and its version, the index directory and whether it is writable, the indexes it holds and the stale temporary index files left by interrupted builds, live child processes, the kill grace period and the limits.",
			InputSchema:   checkStatusSchema,
			SchemaVersion: 2, // 2: the result's index gained "stale_temp_files" and "stale_temp_bytes"
			Annotations:   readOnly,
			Handler:       f.checkStatus,
		},
		{
			Name:          "workspace_status",
			Title:         "Workspace status",
			Description:   "A repository's root, git branch, HEAD and count of files with uncommitted changes, and a summary of its index." + repoNote,
			InputSchema:   repoOnlySchema,
			SchemaVersion: 2, // 2: the description says where the repository comes from without repo_path
			Annotations:   readOnly,
			ClientDir:     true,
			Handler:       f.workspaceStatus,
		},
	}
}
