//go:build unix

package test

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// TestClarificationSeedExamples runs three worked examples of the
// clarification tools (its failure messages label them 7.1 a simple task,
// 7.2 a multi-turn ADR, 7.3 reading the architecture back) through the shim
// with the official Go SDK client,
// started in a subdirectory of a git repository: a typo fix gives a task
// only; "Add authentication" takes two turns and writes an ADR, the task and
// the projection; read_architecture returns it.
func TestClarificationSeedExamples(t *testing.T) {
	repo := gitRepo(t)
	env, _, _ := shimEnv(t)
	cs := shimSessionIn(t, env, filepath.Join(repo, "docs"), nil) // gitRepo has docs/into.md

	r := structured(t, callTool(t, cs, "require_clarification", map[string]any{"user_intention": "Fix typo in login button"}))
	if r["status"] != "completed" || len(r["artifacts_created"].([]any)) != 1 {
		t.Fatalf("7.1: %v", r)
	}
	r = structured(t, callTool(t, cs, "require_clarification", map[string]any{"user_intention": "Add authentication"}))
	if r["status"] != "needs_clarification" || len(r["questions"].([]any)) != 2 {
		t.Fatalf("7.2 turn 1: %v", r)
	}
	// The second turn comes from another editor's connection: a session
	// belongs to whoever holds its id.
	other := shimSessionIn(t, env, repo, nil)
	r = structured(t, callTool(t, other, "require_clarification", map[string]any{"user_intention": "Add authentication", "session_id": r["session_id"],
		"answers": map[string]any{"auth_strategy": "OAuth", "auth_library": "next-auth"}}))
	arts := r["artifacts_created"].([]any)
	if r["status"] != "completed" || len(arts) != 4 { // ADR, archived typo task, task, projection
		t.Fatalf("7.2 turn 2: %v", r)
	}
	adr := arts[0].(map[string]any)
	if !regexp.MustCompile(`^docs/adr/\d{8}T\d{6}\.\d{3}Z-[0-9A-Z]{4}_authentication\.md$`).MatchString(adr["path"].(string)) {
		t.Fatalf("ADR path: %v", adr)
	}
	for _, p := range []string{adr["path"].(string), "docs/CURRENT_TASK.md", "docs/ARCHITECTURE_STATE.md"} {
		if _, err := os.Stat(filepath.Join(repo, p)); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
	}
	a := structured(t, callTool(t, cs, "read_architecture", map[string]any{}))
	arch := a["architecture"].(map[string]any)
	auth := arch["categories"].(map[string]any)["Authentication"].(map[string]any)
	if arch["uid"] != adr["uid"] || auth["Strategy"] != "OAuth" || auth["Library"] != "next-auth" {
		t.Fatalf("7.3: %v", a)
	}
	// Errors keep the Preflights envelope inside the isError result.
	res := callTool(t, cs, "require_clarification", map[string]any{"user_intention": "x", "session_id": "sess-unknown"})
	e := toolError(t, res)
	if !res.IsError || e["status"] != "error" || e["error"].(map[string]any)["code"] != "SESSION_NOT_FOUND" {
		t.Fatalf("error envelope: %+v", e)
	}
}
