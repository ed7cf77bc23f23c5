package clarify

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/hearth-mcp/hearth/pkg/safefile/safefiletest"
	"github.com/hearth-mcp/hearth/pkg/tool"
)

// clock is an injectable time.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

type fixture struct {
	t    *testing.T
	f    *Family
	reg  *tool.Registry
	repo string
	clk  *clock
	cwd  string
}

func newRepo(t *testing.T) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

func newFixture(t *testing.T, vars map[string]string) *fixture {
	t.Helper()
	clk := &clock{t: time.Date(2026, 11, 22, 14, 35, 12, 237e6, time.UTC)}
	f := open(tool.Env{Log: zap.NewNop(), Getenv: func(k string) string { return vars[k] }}, clk.now)
	reg := tool.NewRegistry("test")
	for _, tl := range f.Tools() {
		if err := reg.Add(tl); err != nil {
			t.Fatalf("tool contract: %v", err)
		}
	}
	repo := newRepo(t)
	return &fixture{t: t, f: f, reg: reg, repo: repo, clk: clk, cwd: repo}
}

// call runs a tool as the daemon does and returns the JSON the client sees
// (the result, or the error object of an isError result) and isError.
func (fx *fixture) call(name string, args map[string]any) (map[string]any, bool) {
	fx.t.Helper()
	e, ok := fx.reg.Lookup(name)
	if !ok {
		fx.t.Fatalf("no tool %s", name)
	}
	raw, _ := json.Marshal(args)
	checked, bad := e.CheckArgs(raw)
	var v any
	var err error
	if bad != nil {
		err = bad
	} else {
		v, err = e.Handler(context.Background(), tool.NewCall(name, checked, nil, tool.Client{Cwd: fx.cwd}, nil))
	}
	if err != nil {
		te, ok := tool.AsError(err)
		if !ok {
			fx.t.Fatalf("%s: not a tool error: %v", name, err)
		}
		v = te.Object()
	}
	b, _ := json.Marshal(v)
	var m map[string]any
	json.Unmarshal(b, &m)
	return m, err != nil
}

func (fx *fixture) ok(name string, args map[string]any) map[string]any {
	fx.t.Helper()
	m, isErr := fx.call(name, args)
	if isErr {
		fx.t.Fatalf("%s %v: %v", name, args, m)
	}
	return m
}

// envelopeErr runs a call that must fail with the Preflights envelope and code.
func (fx *fixture) envelopeErr(code string, name string, args map[string]any) map[string]any {
	fx.t.Helper()
	m, isErr := fx.call(name, args)
	e, _ := m["error"].(map[string]any)
	if !isErr || m["status"] != "error" || m["code"] != code || e == nil || e["code"] != code || e["recovery_hint"] == "" || e["details"] == nil {
		fx.t.Fatalf("%s %v: want %s in the Preflights envelope, got %v", name, args, code, m)
	}
	return e
}

func (fx *fixture) read(p string) string {
	fx.t.Helper()
	b, err := os.ReadFile(filepath.Join(fx.repo, p))
	if err != nil {
		fx.t.Fatal(err)
	}
	return string(b)
}

func questionIDs(m map[string]any) []string {
	var ids []string
	for _, q := range m["questions"].([]any) {
		ids = append(ids, q.(map[string]any)["id"].(string))
	}
	return ids
}

func artifactTypes(m map[string]any) []string {
	var out []string
	for _, a := range m["artifacts_created"].([]any) {
		out = append(out, a.(map[string]any)["type"].(string))
	}
	return out
}

// TestSimpleTaskNoADR: a fix, a refactor or a config-only change needs no
// decision: it gets a task at once, no questions, no ADR.
func TestSimpleTaskNoADR(t *testing.T) {
	fx := newFixture(t, nil)
	m := fx.ok("require_clarification", map[string]any{"user_intention": "Fix typo in login button"})
	if m["status"] != "completed" || !slices.Equal(artifactTypes(m), []string{"task"}) {
		t.Fatalf("typo fix: %v", m)
	}
	task := fx.read("docs/CURRENT_TASK.md")
	if !strings.Contains(task, "# Current Task: Fix typo in login button") || !strings.Contains(task, "- ADR: none") {
		t.Fatalf("task:\n%s", task)
	}
	if _, err := os.Stat(filepath.Join(fx.repo, "docs/adr")); !os.IsNotExist(err) {
		t.Fatalf("no ADR directory expected: %v", err)
	}
	for _, intention := range []string{"Refactor the login handler", "Add a GitHub OAuth provider to the config", "Bump lodash"} {
		if m := fx.ok("require_clarification", map[string]any{"user_intention": intention}); m["status"] != "completed" || len(artifactTypes(m)) != 2 {
			t.Fatalf("%q: %v", intention, m) // task + the archived previous task
		}
	}
}

// TestExplicitNulls: clients of Preflights send null for an argument they
// leave out, and every optional argument accepts it as absent.
func TestExplicitNulls(t *testing.T) {
	fx := newFixture(t, nil)
	nulls := map[string]any{"optional_context": nil, "session_id": nil, "answers": nil, "preferences": nil, "repo_path": nil}
	args := map[string]any{"user_intention": "Fix typo in login button"}
	for k, v := range nulls {
		args[k] = v
	}
	if m := fx.ok("require_clarification", args); m["status"] != "completed" {
		t.Fatalf("with nulls: %v", m)
	}
	if m := fx.ok("read_architecture", map[string]any{"repo_path": nil}); m["status"] != "success" {
		t.Fatalf("read_architecture with a null repo_path: %v", m)
	}
	if m := fx.ok("read_architecture", map[string]any{"repo_path": ""}); m["status"] != "success" {
		t.Fatalf("read_architecture with an empty repo_path: %v", m)
	}
	for name, bad := range map[string]any{"session_id": 5, "answers": []any{}, "preferences": "yes", "repo_path": false, "optional_context": map[string]any{}} {
		args := map[string]any{"user_intention": "Fix typo in login button", name: bad}
		if m, isErr := fx.call("require_clarification", args); !isErr || m["code"] != "INVALID_REQUEST" || !strings.Contains(fmt.Sprint(m["errors"]), "/"+name) {
			t.Errorf("%s %v: %v", name, bad, m)
		}
	}
}

// TestMultiTurnADR: an architecture-impacting request asks its questions over
// turns, then writes an ADR, the task and the projection, which
// read_architecture returns; then a second decision.
func TestMultiTurnADR(t *testing.T) {
	fx := newFixture(t, nil)
	if m := fx.ok("read_architecture", map[string]any{}); m["architecture"].(map[string]any)["uid"] != nil {
		t.Fatalf("no ADR yet: %v", m)
	}
	m := fx.ok("require_clarification", map[string]any{"user_intention": "Add authentication"})
	if m["status"] != "needs_clarification" || !slices.Equal(questionIDs(m), []string{"auth_strategy", "auth_library"}) {
		t.Fatalf("turn 1: %v", m)
	}
	if p := m["progress"].(map[string]any); p["asked_so_far"] != 2.0 || p["answered"] != 0.0 {
		t.Fatalf("progress: %v", p)
	}
	q0 := m["questions"].([]any)[0].(map[string]any)
	if q0["type"] != "single_choice" || !slices.Contains(toStrings(q0["options"]), "Other (specify)") || q0["depends_on_question_id"] != nil {
		t.Fatalf("question shape: %v", q0)
	}
	sid := m["session_id"].(string)
	m = fx.ok("require_clarification", map[string]any{"user_intention": "Add authentication", "session_id": sid,
		"answers": map[string]any{"auth_strategy": "OAuth", "auth_library": "next-auth"}})
	if m["status"] != "completed" || !slices.Equal(artifactTypes(m), []string{"adr", "task", "projection"}) {
		t.Fatalf("turn 2: %v", m)
	}
	adr := m["artifacts_created"].([]any)[0].(map[string]any)
	uid := adr["uid"].(string)
	if !uidPattern.MatchString(uid) || adr["path"] != "docs/adr/"+uid+"_authentication.md" || !strings.HasPrefix(uid, "20261122T143512.237Z-") {
		t.Fatalf("adr artifact: %v", adr)
	}
	first := fx.read(adr["path"].(string))
	arch := fx.ok("read_architecture", map[string]any{})
	want := map[string]any{"uid": uid, "categories": map[string]any{"Authentication": map[string]any{"Strategy": "OAuth", "Library": "next-auth"}}}
	if !jsonEqual(arch["architecture"], want) || arch["source_file"] != "docs/ARCHITECTURE_STATE.md" || arch["status"] != "success" {
		t.Fatalf("read_architecture: %v", arch)
	}
	firstTask := fx.read("docs/CURRENT_TASK.md")

	// A second decision amends the architecture in a new ADR.
	fx.clk.advance(time.Second)
	m = fx.ok("require_clarification", map[string]any{"user_intention": "Use a PostgreSQL database for user accounts",
		"answers": map[string]any{"db_type": "PostgreSQL", "db_orm": "Prisma"}})
	if m["status"] != "completed" || !slices.Equal(artifactTypes(m), []string{"adr", "task_archive", "task", "projection"}) {
		t.Fatalf("second decision: %v", m)
	}
	if got := fx.read(adr["path"].(string)); got != first {
		t.Fatal("the first ADR changed")
	}
	second := m["artifacts_created"].([]any)[0].(map[string]any)
	if second["uid"].(string) <= uid {
		t.Fatalf("UIDs out of order: %v then %v", uid, second["uid"])
	}
	secondADR := fx.read(second["path"].(string))
	if !strings.Contains(secondADR, "- Previous ADR: "+uid) || !strings.Contains(secondADR, "### Authentication\n\n- Library: next-auth\n- Strategy: OAuth") {
		t.Fatalf("second ADR does not carry the snapshot forward:\n%s", secondADR)
	}
	archive := m["artifacts_created"].([]any)[1].(map[string]any)["path"].(string)
	if fx.read(archive) != firstTask || !strings.HasPrefix(archive, "docs/archive/task/") {
		t.Fatalf("archive %s does not hold the previous task", archive)
	}
	arch = fx.ok("read_architecture", map[string]any{})
	cats := arch["architecture"].(map[string]any)["categories"].(map[string]any)
	if arch["architecture"].(map[string]any)["uid"] != second["uid"] || cats["Database"] == nil || cats["Authentication"] == nil {
		t.Fatalf("after the second ADR: %v", arch)
	}

	// The projection is regenerated after deletion, and when stale.
	proj := fx.read("docs/ARCHITECTURE_STATE.md")
	os.Remove(filepath.Join(fx.repo, "docs/ARCHITECTURE_STATE.md"))
	if again := fx.ok("read_architecture", map[string]any{}); !jsonEqual(again, arch) || fx.read("docs/ARCHITECTURE_STATE.md") != proj {
		t.Fatalf("regenerated: %v", again)
	}
	os.WriteFile(filepath.Join(fx.repo, "docs/ARCHITECTURE_STATE.md"), []byte("# hand edited\n- UID: "+uid+"\n"), 0o644)
	if again := fx.ok("read_architecture", map[string]any{}); !jsonEqual(again, arch) || fx.read("docs/ARCHITECTURE_STATE.md") != proj {
		t.Fatalf("stale projection not regenerated: %v", again)
	}
}

func TestConditionalQuestionsAndAnswers(t *testing.T) {
	fx := newFixture(t, nil)
	m := fx.ok("require_clarification", map[string]any{"user_intention": "Add authentication"})
	sid := m["session_id"].(string)
	args := func(answers map[string]any) map[string]any {
		return map[string]any{"user_intention": "Add authentication", "session_id": sid, "answers": answers}
	}
	// Bad answers change nothing.
	e := fx.envelopeErr(codeValidationFailed, "require_clarification", args(map[string]any{"auth_strategy": 3, "nope": "x", "auth_strategy_other": "WebAuthn"}))
	inv := e["details"].(map[string]any)["invalid_answers"].(map[string]any)
	if len(inv) != 3 {
		t.Fatalf("invalid answers: %v", inv)
	}
	// "Other (specify)" brings its follow-up, as an ordinary question.
	m = fx.ok("require_clarification", args(map[string]any{"auth_strategy": "Other (specify)", "auth_library": "Other: Ory Kratos"}))
	if m["status"] != "needs_clarification" || !slices.Equal(questionIDs(m), []string{"auth_strategy_other"}) {
		t.Fatalf("follow-up: %v", m)
	}
	if p := m["progress"].(map[string]any); p["asked_so_far"] != 3.0 || p["answered"] != 2.0 {
		t.Fatalf("progress: %v", p)
	}
	m = fx.ok("require_clarification", args(map[string]any{"auth_strategy_other": "WebAuthn passkeys"}))
	if m["status"] != "completed" {
		t.Fatalf("completed: %v", m)
	}
	arch := fx.ok("read_architecture", map[string]any{})["architecture"].(map[string]any)["categories"].(map[string]any)
	if !jsonEqual(arch["Authentication"], map[string]any{"Strategy": "WebAuthn passkeys", "Library": "Ory Kratos"}) {
		t.Fatalf("decisions: %v", arch)
	}
	// A completed session cannot be continued.
	fx.envelopeErr(codeSessionNotFound, "require_clarification", args(nil))
}

func TestFiveQuestionCap(t *testing.T) {
	fx := newFixture(t, nil)
	m := fx.ok("require_clarification", map[string]any{"user_intention": "Add authentication backed by a PostgreSQL database with a Redis cache"})
	if ids := questionIDs(m); len(ids) != MaxQuestions {
		t.Fatalf("questions: %v", ids)
	}
	sid := m["session_id"].(string)
	answers := map[string]any{}
	for _, id := range questionIDs(m) {
		answers[id] = "Other (specify)" // each would want a follow-up
	}
	m, _ = fx.call("require_clarification", map[string]any{"user_intention": "Add authentication backed by a PostgreSQL database with a Redis cache", "session_id": sid, "answers": answers})
	if m["status"] == "needs_clarification" {
		t.Fatalf("asked past the cap: %v", m)
	}
}

func TestSessionErrorsAndExpiry(t *testing.T) {
	fx := newFixture(t, nil)
	fx.envelopeErr(codeSessionNotFound, "require_clarification", map[string]any{"user_intention": "x", "session_id": "sess-nope"})
	m := fx.ok("require_clarification", map[string]any{"user_intention": "Add authentication"})
	sid := m["session_id"].(string)
	turn := map[string]any{"user_intention": "Add authentication", "session_id": sid}
	fx.clk.advance(29 * time.Minute)
	if m := fx.ok("require_clarification", turn); m["status"] != "needs_clarification" { // activity renews it
		t.Fatalf("within 30 minutes: %v", m)
	}
	fx.clk.advance(SessionTTL + time.Second)
	fx.envelopeErr(codeSessionExpired, "require_clarification", turn)

	m = fx.ok("require_clarification", map[string]any{"user_intention": "Add authentication"})
	sid = m["session_id"].(string)
	fx.envelopeErr(codeValidationFailed, "require_clarification", map[string]any{"user_intention": "Add billing", "session_id": sid})
	fx.envelopeErr(codeValidationFailed, "require_clarification", map[string]any{"user_intention": "Add authentication", "session_id": sid, "preferences": map[string]any{"force_adr": true}})
	other := newRepo(t)
	fx.envelopeErr(codeValidationFailed, "require_clarification", map[string]any{"user_intention": "Add authentication", "session_id": sid, "repo_path": other})
	// Unknown arguments are the tool contract's INVALID_REQUEST.
	if m, isErr := fx.call("require_clarification", map[string]any{"user_intention": "x", "urgent": true}); !isErr || m["code"] != "INVALID_REQUEST" {
		t.Fatalf("unknown argument: %v", m)
	}
}

func TestForceADRAndContext(t *testing.T) {
	fx := newFixture(t, nil)
	m := fx.ok("require_clarification", map[string]any{"user_intention": "Fix the flaky test", "preferences": map[string]any{"force_adr": true},
		"optional_context": "It fails one run in ten on CI."})
	if m["status"] != "needs_clarification" || !slices.Equal(questionIDs(m), []string{"decision", "alternatives"}) {
		t.Fatalf("force_adr: %v", m)
	}
	m = fx.ok("require_clarification", map[string]any{"user_intention": "Fix the flaky test", "session_id": m["session_id"],
		"optional_context": "Only on ARM runners.", "answers": map[string]any{"decision": "Retry flaky tests once in CI"}})
	if m["status"] != "completed" || artifactTypes(m)[0] != "adr" {
		t.Fatalf("completed: %v", m)
	}
	adr := fx.read(m["artifacts_created"].([]any)[0].(map[string]any)["path"].(string))
	if !strings.Contains(adr, "It fails one run in ten on CI.") || !strings.Contains(adr, "Only on ARM runners.") || !strings.Contains(adr, "- Decision: Retry flaky tests once in CI") {
		t.Fatalf("ADR:\n%s", adr)
	}
	// Explicit intent: "architecture" asks for an ADR without force_adr.
	if m := fx.ok("require_clarification", map[string]any{"user_intention": "Decide the architecture of the plugin system"}); m["status"] != "needs_clarification" {
		t.Fatalf("explicit intent: %v", m)
	}
}

func TestRepositoryDiscoveryAndErrors(t *testing.T) {
	fx := newFixture(t, nil)
	nested := filepath.Join(fx.repo, "a", "b")
	os.MkdirAll(nested, 0o755)
	fx.cwd = nested
	m := fx.ok("require_clarification", map[string]any{"user_intention": "Fix typo in README"})
	if m["status"] != "completed" {
		t.Fatal(m)
	}
	if _, err := os.Stat(filepath.Join(fx.repo, "docs", "CURRENT_TASK.md")); err != nil {
		t.Fatalf("the task is not at the repository root: %v", err)
	}
	fx.cwd = t.TempDir()
	e := fx.envelopeErr(codeRepoNotFound, "require_clarification", map[string]any{"user_intention": "x"})
	if e["message"] != "No git repository found" || e["recovery_hint"] != "Run from a git repository or provide repo_path" {
		t.Fatalf("fixed wording: %v", e)
	}
	fx.envelopeErr(codeRepoNotFound, "read_architecture", map[string]any{})
	fx.envelopeErr(codeRepoNotFound, "read_architecture", map[string]any{"repo_path": filepath.Join(fx.repo, "missing")})
	if m := fx.ok("read_architecture", map[string]any{"repo_path": fx.repo}); m["status"] != "success" {
		t.Fatal(m)
	}

	// docs/ leading out of the repository is refused.
	evil := newRepo(t)
	outside := t.TempDir()
	os.Symlink(outside, filepath.Join(evil, "docs"))
	e = fx.envelopeErr(codeFilesystemError, "require_clarification", map[string]any{"user_intention": "Fix typo", "repo_path": evil})
	if entries, _ := os.ReadDir(outside); len(entries) != 0 || !strings.Contains(e["message"].(string), "outside the repository") {
		t.Fatalf("wrote outside: %v %v", entries, e)
	}
	// An unwritable docs/ is FILESYSTEM_ERROR with the path and the reason.
	if os.Geteuid() != 0 {
		ro := newRepo(t)
		os.MkdirAll(filepath.Join(ro, "docs"), 0o555)
		e = fx.envelopeErr(codeFilesystemError, "require_clarification", map[string]any{"user_intention": "Fix typo", "repo_path": ro})
		d := e["details"].(map[string]any)
		if !strings.Contains(d["reason"].(string), "permission denied") || d["path"] == nil {
			t.Fatalf("read-only docs: %v", e)
		}
	}
}

// TestSpecialFilesInDocs: a FIFO, a socket or a device where the current
// task or the projection belongs is refused or replaced at once, never read
// (opening a FIFO for reading waits for a writer; a device may never end).
func TestSpecialFilesInDocs(t *testing.T) {
	fx := newFixture(t, nil)
	m := fx.ok("require_clarification", map[string]any{"user_intention": "Add authentication",
		"answers": map[string]any{"auth_strategy": "OAuth", "auth_library": "next-auth"}})
	if !slices.Contains(artifactTypes(m), "adr") {
		t.Fatalf("no ADR to project: %v", m)
	}
	docs := filepath.Join(fx.repo, "docs")
	for _, sp := range safefiletest.Make(t, filepath.Join(fx.repo, "special")) {
		special := filepath.Join(fx.repo, "special", sp.Name)
		// The task: refused with what it is, and left in place.
		task := filepath.Join(docs, taskFile)
		os.Remove(task)
		if err := os.Rename(special, task); err != nil {
			t.Fatal(err)
		}
		var isErr bool
		safefiletest.Prompt(t, "require_clarification over a "+sp.Kind, func() {
			m, isErr = fx.call("require_clarification", map[string]any{"user_intention": "Fix typo in README"})
		})
		want := taskFile + " is a " + sp.Kind + ", not a regular file"
		if !isErr || m["code"] != codeFilesystemError || !strings.Contains(fmt.Sprint(m["error"]), want) {
			t.Errorf("task is a %s: %v; want %s with %q", sp.Kind, m, codeFilesystemError, want)
		}
		if fi, err := os.Lstat(task); err != nil || fi.Mode().IsRegular() {
			t.Errorf("the %s was replaced: %v %v", sp.Kind, fi, err)
		}
		// The projection: hearth's own, regenerated over it.
		proj := filepath.Join(docs, projectionFile)
		if err := os.Rename(task, proj); err != nil {
			t.Fatal(err)
		}
		safefiletest.Prompt(t, "read_architecture over a "+sp.Kind, func() { m, isErr = fx.call("read_architecture", map[string]any{}) })
		if isErr || m["status"] != "success" {
			t.Errorf("projection is a %s: %v", sp.Kind, m)
		}
		if fi, err := os.Lstat(proj); err != nil || !fi.Mode().IsRegular() {
			t.Errorf("the projection was not regenerated over the %s: %v %v", sp.Kind, fi, err)
		}
	}
	// docs/adr, then docs itself, a FIFO: refused before it is opened.
	for rel, want := range map[string]string{"docs/adr": "adr is a FIFO, not a directory", "docs": "docs is a FIFO, not a directory"} {
		repo := newRepo(t)
		if len(safefiletest.Make(t, filepath.Join(repo, "special"))) == 0 {
			t.Skip("no FIFO on this system")
		}
		os.MkdirAll(filepath.Dir(filepath.Join(repo, rel)), 0o755)
		if err := os.Rename(filepath.Join(repo, "special", "fifo"), filepath.Join(repo, rel)); err != nil {
			t.Fatal(err)
		}
		for _, args := range []map[string]any{{"repo_path": repo}, {"repo_path": repo, "user_intention": "Fix typo in README"}} {
			name := "read_architecture"
			if args["user_intention"] != nil {
				name = "require_clarification"
			}
			var m map[string]any
			var isErr bool
			safefiletest.Prompt(t, name+" with "+rel+" a FIFO", func() { m, isErr = fx.call(name, args) })
			if name == "read_architecture" && (!isErr || !strings.Contains(fmt.Sprint(m["error"]), want)) {
				t.Errorf("%s with %s a FIFO: %v; want %q", name, rel, m, want)
			}
		}
	}
}

func TestMalformedPreviousADR(t *testing.T) {
	fx := newFixture(t, nil)
	m := fx.ok("require_clarification", map[string]any{"user_intention": "Add authentication",
		"answers": map[string]any{"auth_strategy": "OAuth", "auth_library": "next-auth"}})
	if m["status"] != "needs_clarification" {
		// answers before the questions were asked are accepted in one turn
		if m["status"] != "completed" {
			t.Fatal(m)
		}
	}
	list, _ := filepath.Glob(filepath.Join(fx.repo, "docs/adr/*.md"))
	if len(list) != 1 {
		t.Fatalf("ADRs: %v", list)
	}
	orig, _ := os.ReadFile(list[0])
	next := map[string]any{"user_intention": "Use a MySQL database", "answers": map[string]any{"db_type": "MySQL", "db_orm": "Raw SQL"}}

	// A category deleted from the snapshot by hand: VALIDATION_FAILED.
	edited := strings.Replace(string(orig), "### Authentication\n\n- Library: next-auth\n- Strategy: OAuth\n", "", 1)
	os.WriteFile(list[0], []byte(edited), 0o644)
	e := fx.envelopeErr(codeValidationFailed, "require_clarification", next)
	if mk := toStrings(e["details"].(map[string]any)["missing_keys"]); !slices.Equal(mk, []string{"Authentication"}) {
		t.Fatalf("missing_keys: %v", e)
	}
	// No PART 1 at all: PARSE_ERROR.
	os.WriteFile(list[0], []byte(strings.Split(string(orig), part1Heading)[0]), 0o644)
	fx.envelopeErr(codeParseError, "require_clarification", next)
	fx.envelopeErr(codeParseError, "read_architecture", map[string]any{})
	// A task needs no snapshot: it still works.
	if m := fx.ok("require_clarification", map[string]any{"user_intention": "Fix typo in footer"}); m["status"] != "completed" {
		t.Fatal(m)
	}
	os.WriteFile(list[0], orig, 0o644)
	if m := fx.ok("require_clarification", next); m["status"] != "completed" {
		t.Fatal(m)
	}
}

// TestThousandConcurrentADRs: UIDs stay unique and ordered when many ADRs
// are written at once, by many clients.
func TestThousandConcurrentADRs(t *testing.T) {
	fx := newFixture(t, nil)
	fx.clk.t = time.Now() // a real, moving clock
	fx.f.now, fx.f.uids.now, fx.f.sessions.now = time.Now, time.Now, time.Now
	n := 1000
	if testing.Short() {
		n = 200 // the race detector's run (-short): as many goroutines contend, fewer files
	}
	var wg sync.WaitGroup
	var failed atomic.Int32
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m, isErr := fx.call("require_clarification", map[string]any{"user_intention": fmt.Sprintf("Record decision %d", i),
				"preferences": map[string]any{"force_adr": true}, "answers": map[string]any{"decision": fmt.Sprintf("choice %d", i), "alternatives": nil}})
			if isErr || m["status"] != "completed" {
				if failed.Add(1) == 1 {
					t.Errorf("call %d: %v", i, m)
				}
			}
		}()
	}
	wg.Wait()
	if failed.Load() != 0 {
		t.Fatalf("%d calls failed", failed.Load())
	}
	entries, _ := os.ReadDir(filepath.Join(fx.repo, "docs/adr"))
	uids := map[string]bool{}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".tmp-") {
			t.Fatalf("temporary file left: %s", e.Name())
		}
		uids[e.Name()[:25]] = true
	}
	if len(entries) != n || len(uids) != n {
		t.Fatalf("%d files, %d distinct UIDs; want %d", len(entries), len(uids), n)
	}
	archived, _ := os.ReadDir(filepath.Join(fx.repo, "docs/archive/task"))
	if len(archived) != n-1 {
		t.Fatalf("%d archived tasks, want %d", len(archived), n-1)
	}
}

func TestUIDsInOneMillisecond(t *testing.T) {
	frozen := time.Date(2025, 1, 8, 14, 35, 12, 237e6, time.UTC)
	u := newUIDSource(func() time.Time { return frozen })
	var prev string
	for i := 0; i < 5000; i++ {
		id := u.next()
		if !uidPattern.MatchString(id) || id <= prev {
			t.Fatalf("UID %d %q after %q", i, id, prev)
		}
		prev = id
	}
	if !strings.HasPrefix(u.next(), "20250108T143512.2") {
		t.Fatalf("the clock moved too far: %s", u.next())
	}
	// A clock that goes back never makes a smaller UID.
	back := newUIDSource(time.Now)
	a := back.next()
	back.now = func() time.Time { return time.Now().Add(-time.Hour) }
	if b := back.next(); b <= a {
		t.Fatalf("%s after %s", b, a)
	}
}

// TestLLMFallback: a provider that fails, times out or answers garbage is
// tried three times, then the deterministic planner answers with the
// llm_fallback warning; a working one plans and extracts.
func TestLLMFallback(t *testing.T) {
	for _, mode := range []string{"error", "timeout", "garbage", "invalid-plan"} {
		t.Run(mode, func(t *testing.T) {
			var calls atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				calls.Add(1)
				switch mode {
				case "error":
					http.Error(w, "overloaded", http.StatusServiceUnavailable)
				case "timeout":
					select {
					case <-r.Context().Done():
					case <-time.After(2 * time.Second):
					}
				case "garbage":
					w.Write([]byte(`{"choices":[{"message":{"content":"I think you should use OAuth!"}}]}`))
				case "invalid-plan":
					w.Write([]byte(`{"choices":[{"message":{"content":"{\"needs_adr\":true,\"questions\":[{\"id\":\"Bad Id\",\"type\":\"single_choice\",\"question\":\"?\",\"options\":[\"a\"]}]}"}}]}`))
				}
			}))
			defer srv.Close()
			fx := newFixture(t, map[string]string{EnvLLMProvider: srv.URL, EnvLLMModel: "m", EnvLLMTimeout: "200ms"})
			m := fx.ok("require_clarification", map[string]any{"user_intention": "Add authentication"})
			if m["warning"] != "llm_fallback" || m["message"] != "LLM unavailable, using deterministic mode" ||
				!slices.Equal(questionIDs(m), []string{"auth_strategy", "auth_library"}) {
				t.Fatalf("fallback: %v", m)
			}
			if calls.Load() != 1+llmRetries {
				t.Fatalf("%d attempts, want %d", calls.Load(), 1+llmRetries)
			}
			m = fx.ok("require_clarification", map[string]any{"user_intention": "Add authentication", "session_id": m["session_id"],
				"answers": map[string]any{"auth_strategy": "OAuth", "auth_library": "next-auth"}})
			if m["status"] != "completed" || m["warning"] != "llm_fallback" {
				t.Fatalf("completion after fallback: %v", m)
			}
		})
	}
}

func TestLLMPlansAndExtracts(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Model    string `json:"model"`
			Messages []struct{ Role, Content string }
		}
		json.NewDecoder(r.Body).Decode(&req)
		if r.URL.Path != "/api/chat" || req.Model != "llama" {
			http.Error(w, "bad request", 400)
			return
		}
		reply := `{"needs_adr":true,"categories":["Search"],"decision_hint":"new dependency","questions":[
			{"id":"search_engine","type":"single_choice","question":"Which search engine?","options":["Meilisearch","Elasticsearch","Other (specify)"],"category":"Search","key":"Engine"}]}`
		if n := calls.Add(1); n == 2 || strings.Contains(req.Messages[0].Content, "turn a clarified") {
			reply = `{"title":"Search with Meilisearch","summary":"Meilisearch chosen for product search.","decisions":{"Search":{"Engine":"Meilisearch","Hosting":"self-hosted"}}}`
		}
		json.NewEncoder(w).Encode(map[string]any{"message": map[string]string{"role": "assistant", "content": reply}})
	}))
	defer srv.Close()
	fx := newFixture(t, map[string]string{EnvLLMProvider: "ollama", EnvLLMURL: srv.URL, EnvLLMModel: "llama"})
	m := fx.ok("require_clarification", map[string]any{"user_intention": "Add product search"})
	if m["warning"] != nil || !slices.Equal(questionIDs(m), []string{"search_engine"}) {
		t.Fatalf("LLM plan: %v", m)
	}
	m = fx.ok("require_clarification", map[string]any{"user_intention": "Add product search", "session_id": m["session_id"], "answers": map[string]any{"search_engine": "Meilisearch"}})
	if m["status"] != "completed" || m["summary"] != "Meilisearch chosen for product search." || m["warning"] != nil {
		t.Fatalf("LLM extraction: %v", m)
	}
	cats := fx.ok("read_architecture", map[string]any{})["architecture"].(map[string]any)["categories"]
	if !jsonEqual(cats, map[string]any{"Search": map[string]any{"Engine": "Meilisearch", "Hosting": "self-hosted"}}) {
		t.Fatalf("categories: %v", cats)
	}
}

func TestBadLLMConfigurationKeepsTheDeterministicPlanner(t *testing.T) {
	fx := newFixture(t, map[string]string{EnvLLMProvider: "ollama"}) // no model
	if fx.f.llm != nil {
		t.Fatal("an LLM without a model was configured")
	}
	if m := fx.ok("require_clarification", map[string]any{"user_intention": "Add authentication"}); m["warning"] != nil {
		t.Fatal(m)
	}
}

func toStrings(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, x.(string))
	}
	return out
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// TestPatchExtractionFailed: when neither the LLM nor the answers yield a
// decision, completion is PATCH_EXTRACTION_FAILED and nothing is written.
func TestPatchExtractionFailed(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Messages []struct{ Role, Content string }
		}
		json.NewDecoder(r.Body).Decode(&req)
		reply := `{"needs_adr":true,"categories":["Observability"],"questions":[{"id":"notes","type":"free_text","question":"Anything to add?","optional":true}]}`
		if strings.Contains(req.Messages[0].Content, "turn a clarified") {
			reply = `not json at all`
		}
		json.NewEncoder(w).Encode(map[string]any{"choices": []any{map[string]any{"message": map[string]string{"content": reply}}}})
	}))
	defer srv.Close()
	fx := newFixture(t, map[string]string{EnvLLMProvider: srv.URL + "/v1", EnvLLMModel: "m"})
	m := fx.ok("require_clarification", map[string]any{"user_intention": "Add tracing"})
	if !slices.Equal(questionIDs(m), []string{"notes"}) {
		t.Fatal(m)
	}
	fx.envelopeErr(codePatchExtraction, "require_clarification", map[string]any{"user_intention": "Add tracing", "session_id": m["session_id"], "answers": map[string]any{"notes": nil}})
	if _, err := os.Stat(filepath.Join(fx.repo, "docs")); !os.IsNotExist(err) {
		t.Fatalf("something was written: %v", err)
	}
}

// A repo_path inside a repository stands for the repository, as in git: the
// documents go to the work tree's root, never to the subdirectory. A
// directory in no repository is REPO_NOT_FOUND for both tools.
func TestRepoPathResolvesToTheWorkTreeRoot(t *testing.T) {
	fx := newFixture(t, nil)
	sub := filepath.Join(fx.repo, "pkg", "deep")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if m := fx.ok("require_clarification", map[string]any{"user_intention": "Fix typo in README", "repo_path": sub}); m["status"] != "completed" {
		t.Fatalf("require_clarification: %v", m)
	}
	if _, err := os.Stat(filepath.Join(fx.repo, "docs", "CURRENT_TASK.md")); err != nil {
		t.Fatalf("the task is not at the root: %v", err)
	}
	if _, err := os.Stat(filepath.Join(sub, "docs")); !os.IsNotExist(err) {
		t.Fatalf("docs/ was written into the subdirectory: %v", err)
	}
	plain := t.TempDir()
	fx.envelopeErr(codeRepoNotFound, "read_architecture", map[string]any{"repo_path": plain})
	fx.envelopeErr(codeRepoNotFound, "require_clarification", map[string]any{"user_intention": "Fix typo", "repo_path": plain})
}
