package workspace

import (
	"fmt"
	"time"

	"github.com/hearth-mcp/hearth/pkg/repo"
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

var indexBuildSchema = tool.Object(
	tool.RepoPath,
	tool.Prop("incremental", `{"type": "boolean", "default": true, "title": "Incremental",
		"description": "Take files whose size and modification time are unchanged from the existing index instead of reading them again (default true). false rebuilds from scratch."}`),
	tool.TimeoutMS(buildTimeout, buildTimeoutMax, "On expiry the build is stopped, its processes are killed and the previous index stays."),
)

// repoNote ends the description of every tool that works on a repository:
// where it comes from without repo_path, and when repo_path is needed.
const repoNote = " Without repo_path the repository is the client's directory walked up to .git: its MCP roots, or the directory it " +
	"started hearth in (the hearth shim or hearthd stdio). A client that declares no roots and reaches hearth another way must pass repo_path."

var repoOnlySchema = tool.Object(tool.RepoPath)

var searchSchema = tool.Object(
	tool.Prop("query", `{"type": "string", "minLength": 1, "maxLength": 1000, "title": "Query",
		"description": "What to find: literal text, or an RE2 regular expression when regex is true. Matches never span lines."}`).Required(),
	tool.RepoPath,
	tool.Prop("regex", `{"type": "boolean", "default": false, "title": "Regular expression",
		"description": "Treat query as an RE2 regular expression (Go syntax: no backreferences or lookaround; ^ and $ match at line ends). Default false: literal text."}`),
	tool.Prop("case_sensitive", `{"type": "boolean", "default": false, "title": "Case-sensitive",
		"description": "Match letter case exactly (default false: case is ignored)."}`),
	tool.Prop("path_glob", `{"type": "string", "minLength": 1, "maxLength": 1000, "title": "Paths",
		"description": "Only files whose path matches this glob: *, ?, **, [abc], {a,b}. Without '/' it matches the file name in any directory (*.go); with '/' the path from the repository root (pkg/**/*_test.go)."}`),
	tool.Limit(searchLimitDefault, searchLimitMax, "hits (one per matching line)"),
	tool.Prop("context_lines", fmt.Sprintf(`{"type": "integer", "minimum": 0, "maximum": %d, "default": %d, "title": "Context lines",
		"description": "Lines of context before and after each hit (default %d, at most %d)."}`, contextLinesMax, contextLinesDefault, contextLinesDefault, contextLinesMax)),
)

var showFileSchema = tool.Object(
	tool.Prop("path", `{"type": "string", "minLength": 1, "maxLength": 4096, "title": "File",
		"description": "The file, relative to the repository root (as search returns it). Absolute paths, '..' and symbolic links leading out of the repository are refused."}`).Required(),
	tool.RepoPath,
	tool.Prop("start_line", `{"type": "integer", "minimum": 1, "title": "First line",
		"description": "First line to show, 1-based (default 1)."}`),
	tool.Prop("end_line", `{"type": "integer", "minimum": 1, "title": "Last line",
		"description": "Last line to show, inclusive (default: the end of the file). At most 1 MiB of text is returned either way."}`),
)

// Tools lists the family's tools.
func (f *Family) Tools() []tool.Tool {
	readOnly := tool.Annotations{ReadOnly: true, Idempotent: true}
	return []tool.Tool{
		tool.For(tool.Tool{
			Name:  "index_build",
			Title: "Build the code index",
			Description: "Index a repository's text files for search: git's tracked and untracked-but-not-ignored files in a work tree, " +
				"else every file except .git and node_modules; binary files and files over 1 MiB are skipped. Runs as a supervised " +
				"process with progress (files done of total); incremental by default. A cancelled, timed-out or failed build leaves the previous index." + repoNote,
			InputSchema:   indexBuildSchema,
			SchemaVersion: 5, // 2: the description says where the repository comes from without repo_path; 3: repo_path may be null or "" (the default), titles, timeout_ms's default; 4: repo_path says a directory inside a repository stands for it; 5: outputSchema
			Annotations:   tool.Annotations{Idempotent: true},
			Timeout:       buildTimeout,
			TimeoutArg:    "timeout_ms",
			NeedsRoots:    repo.NeedsRoots,
		}, f.indexBuild),
		tool.For(tool.Tool{
			Name:          "index_status",
			Title:         "Index status",
			Description:   "Whether a repository has an index, when it was built, its size, the git HEAD it was built at, and the files added, modified or deleted since." + repoNote,
			InputSchema:   repoOnlySchema,
			SchemaVersion: 5, // 2: the description says where the repository comes from without repo_path; 3: repo_path may be null or "" (the default), titled; 4: repo_path says a directory inside a repository stands for it; 5: outputSchema
			Annotations:   readOnly,
			NeedsRoots:    repo.NeedsRoots,
		}, f.indexStatus),
		tool.For(tool.Tool{
			Name:  "search",
			Title: "Search code",
			Description: "Find lines in a repository's indexed files: literal text or an RE2 regular expression, case-insensitive by default, " +
				"optionally limited to a path glob. Each hit has path, line, column, text and context lines. Needs index_build first (NO_INDEX otherwise); " +
				"results reflect the files as of the last build." + repoNote,
			InputSchema:   searchSchema,
			SchemaVersion: 5, // 2: the description says where the repository comes from without repo_path; 3: repo_path may be null or "" (the default), titles; 4: repo_path says a directory inside a repository stands for it; 5: outputSchema
			Annotations:   readOnly,
			Timeout:       30 * time.Second,
			NeedsRoots:    repo.NeedsRoots,
		}, f.search),
		tool.For(tool.Tool{
			Name:          "show_file",
			Title:         "Show a file",
			Description:   "A repository file's current text with line numbers, optionally a line range; at most 1 MiB. Binary files and paths leaving the repository are refused." + repoNote,
			InputSchema:   showFileSchema,
			SchemaVersion: 5, // 2: the description says where the repository comes from without repo_path; 3: repo_path may be null or "" (the default), titles; 4: repo_path says a directory inside a repository stands for it; 5: outputSchema
			Annotations:   readOnly,
			NeedsRoots:    repo.NeedsRoots,
		}, f.showFile),
		tool.For(tool.Tool{
			Name:          "check_status",
			Title:         "Workspace capabilities",
			Description:   "What the workspace tools can do here: git present and its version, the index directory and whether it is writable, the indexes it holds and the stale temporary index files left by interrupted builds, live child processes, the kill grace period and the limits.",
			InputSchema:   tool.Object(),
			SchemaVersion: 3, // 2: the result's index gained "stale_temp_files" and "stale_temp_bytes"; 3: outputSchema
			Annotations:   readOnly,
		}, f.checkStatus),
		tool.For(tool.Tool{
			Name:          "workspace_status",
			Title:         "Workspace status",
			Description:   "A repository's root, git branch, HEAD and count of files with uncommitted changes, and a summary of its index." + repoNote,
			InputSchema:   repoOnlySchema,
			SchemaVersion: 5, // 2: the description says where the repository comes from without repo_path; 3: repo_path may be null or "" (the default), titled; 4: repo_path says a directory inside a repository stands for it; 5: outputSchema
			Annotations:   readOnly,
			NeedsRoots:    repo.NeedsRoots,
		}, f.workspaceStatus),
	}
}
