// Package clarify is hearth's clarification family: require_clarification
// asks the questions a request needs before work starts and writes the
// repository's decision records; read_architecture returns the current
// architecture snapshot.
//
// The tools keep the contract of Preflights, an existing clarification tool,
// so that its clients and its CLI work with them unchanged: the same tool
// names, result shapes, error envelope and codes (errors.go), repository
// files (docs.go), UIDs (uid.go) and LLM variables (llm.go). Errors carry
// that envelope inside the tool contract's isError result
// (docs/decisions/0009-clarify-errors-carry-both-envelopes.md).
//
// Artifacts live under the repository's docs/: immutable ADRs named by UID
// (adr/<UID>_<slug>.md), CURRENT_TASK.md (the previous one archived first to
// archive/task/<UID>_<slug>.md) and ARCHITECTURE_STATE.md, a projection of
// the latest ADR's snapshot that is regenerated whenever it is missing or
// stale. Sessions live in the daemon's memory for 30 idle minutes.
package clarify

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/hearth-mcp/hearth/pkg/llm"

	"github.com/hearth-mcp/hearth/pkg/repo"
	"github.com/hearth-mcp/hearth/pkg/tool"
)

// Family is the clarification family as the daemon holds it.
type Family struct {
	log      *zap.Logger
	now      func() time.Time
	uids     *uidSource
	sessions *sessions
	llm      llm.Chatter // nil: the deterministic planner only
	// writeMu makes "read the latest ADR, write the next one" one step
	// within the daemon, so two completions never build on the same ADR.
	writeMu sync.Mutex
}

var _ tool.Family = (*Family)(nil)

// Open opens the family. A bad LLM configuration is logged and leaves the
// deterministic planner in charge; it never stops the daemon.
func Open(env tool.Env) (tool.Family, error) { return open(env, time.Now), nil }

func open(env tool.Env, now func() time.Time) *Family {
	log := env.Log
	if log == nil {
		log = zap.NewNop()
	}
	getenv := env.Getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	f := &Family{log: log, now: now, uids: newUIDSource(now), sessions: newSessions(now)}
	chat, err := llm.FromEnv(getenv)
	if err != nil {
		log.Warn("clarification LLM not used: using the deterministic planner", zap.Error(err))
	}
	f.llm = chat
	return f
}

// Close has nothing to release: sessions end with the daemon.
func (f *Family) Close() error { return nil }

// The clarification tools keep the arguments of Preflights, whose clients
// send null for an argument they leave out: every optional one is a value
// of its type or null, and null means absent.
var requireSchema = tool.Object(
	tool.Prop("user_intention", `{"type": "string", "minLength": 1, "maxLength": 4000, "title": "Request",
		"description": "What the user wants done, in their words. On a later turn of a session, the same text as the first."}`).Required(),
	tool.Prop("optional_context", `{"anyOf": [{"type": "string", "maxLength": 20000}, {"type": "null"}], "title": "Context",
		"description": "Anything else that helps: constraints, files involved. Context given on a later turn is added to the session's."}`),
	tool.Prop("session_id", `{"anyOf": [{"type": "string", "maxLength": 64}, {"type": "null"}], "title": "Session",
		"description": "The session_id a needs_clarification reply returned, to continue that clarification. Omit to start one."}`),
	tool.Prop("answers", `{"anyOf": [{"type": "object", "additionalProperties": true}, {"type": "null"}], "title": "Answers",
		"description": "Answers by question id: a string for single_choice and free_text (an answer outside the options is your own when 'Other (specify)' is offered), an array of strings for multi_choice."}`),
	tool.Prop("preferences", `{"anyOf": [{"type": "object", "additionalProperties": false,
			"properties": {"force_adr": {"type": "boolean", "title": "Force an ADR", "description": "Write an ADR even if the request would not need one."}}},
		{"type": "null"}], "title": "Preferences",
		"description": "How to treat the request; only when a session starts."}`),
	tool.RepoPath,
)

var readSchema = tool.Object(tool.RepoPath)

// repoNote ends each tool's description: where the repository comes from
// without repo_path, and when repo_path is needed.
const repoNote = " Without repo_path the repository is the client's directory walked up to .git: its MCP roots, or the directory it " +
	"started hearth in (the hearth shim or hearthd stdio). A client that declares no roots and reaches hearth another way must pass repo_path."

// Tools lists require_clarification and read_architecture.
func (f *Family) Tools() []tool.Tool {
	return []tool.Tool{
		tool.For(tool.Tool{
			Name:  "require_clarification",
			Title: "Clarify a request before work starts",
			Description: "Start or continue the clarification of a change request. Structurally impactful requests (auth, database, storage, cache, " +
				"framework, runtime, deployment, infrastructure, queues; new dependencies, migrations; 'architecture', 'strategy', 'approach') get up to 5 " +
				"questions over one or more turns, then an immutable ADR in docs/adr/, docs/CURRENT_TASK.md and docs/ARCHITECTURE_STATE.md. Bug fixes, refactors " +
				"and config-only changes get docs/CURRENT_TASK.md at once. Reply status: needs_clarification (answer the questions with session_id), completed, or error." + repoNote,
			InputSchema:   requireSchema,
			SchemaVersion: 6, // 6: outputSchema derived from the result (questions and artifacts say what they hold); 5: outputSchema; 2: the description says where the repository comes from without repo_path; 3: nullable arguments as anyOf branches, titles, the shared repo_path; 4: repo_path says a directory inside a repository stands for it
			NeedsRoots:    repo.NeedsRoots,
			Annotations:   tool.Annotations{},
			Timeout:       3 * time.Minute, // an LLM may be tried three times
		}, f.requireClarification),
		tool.For(tool.Tool{
			Name:          "read_architecture",
			Title:         "Read the architecture snapshot",
			Description:   "The repository's current architecture: the latest ADR's UID and its categories of decisions (from docs/ARCHITECTURE_STATE.md, regenerated from the latest ADR when missing or stale). No ADR yet: uid null, no categories." + repoNote,
			InputSchema:   readSchema,
			SchemaVersion: 6, // 6: outputSchema derived from the result (categories say what they hold); 5: outputSchema; 2: the description says where the repository comes from without repo_path; 3: repo_path as anyOf branches, titled, the shared one; 4: repo_path says a directory inside a repository stands for it
			NeedsRoots:    repo.NeedsRoots,
			Annotations:   tool.Annotations{Idempotent: true},
		}, f.readArchitecture),
	}
}

// findRepo is repository discovery (package repo) with REPO_NOT_FOUND in the
// Preflights envelope.
func findRepo(repoPath *string, c tool.Client) (string, *envelopeError) {
	p := ""
	if repoPath != nil {
		p = *repoPath
	}
	root, err := repo.FindRepository(p, c.Cwd, c.Roots)
	if err == nil {
		return root, nil
	}
	var re *repo.Error
	details := map[string]any{}
	if errors.As(err, &re) {
		details["reason"] = re.Reason
		if re.Path != "" {
			details["path"] = re.Path
		}
	}
	return "", &envelopeError{code: codeRepoNotFound, message: "No git repository found", details: details,
		recoveryHint: "Run from a git repository or provide repo_path"}
}

// readArgs are read_architecture's arguments.
type readArgs struct {
	RepoPath *string `json:"repo_path,omitempty"`
}

func (f *Family) readArchitecture(ctx context.Context, call *tool.Call, a readArgs) (*readResult, error) {
	root, serr := findRepo(a.RepoPath, call.Client)
	if serr != nil {
		return nil, serr.toolError()
	}
	result := func(uid string, snap Snapshot) *readResult {
		var u *string
		if uid != "" {
			u = &uid
		}
		return &readResult{Status: "success", Architecture: architectureJSON{UID: u, Categories: snap}, SourceFile: rel(projectionFile)}
	}
	if _, err := os.Lstat(filepath.Join(root, docsDir)); errors.Is(err, fs.ErrNotExist) {
		return result("", Snapshot{}), nil // no docs/ yet: no ADR
	}
	d, err := openDocs(root, false)
	if err != nil {
		return nil, asToolError(err)
	}
	defer d.close()
	f.writeMu.Lock()
	uid, snap, _, err := d.projection()
	f.writeMu.Unlock()
	if err != nil {
		return nil, asToolError(err)
	}
	return result(uid, snap), nil
}

func asToolError(err error) error {
	var se *envelopeError
	if errors.As(err, &se) {
		return se.toolError()
	}
	return err
}

// requireArgs are require_clarification's arguments; a nil pointer or map
// is an argument left out or sent as null.
type requireArgs struct {
	UserIntention   string         `json:"user_intention"`
	OptionalContext *string        `json:"optional_context,omitempty"`
	SessionID       *string        `json:"session_id,omitempty"`
	Answers         map[string]any `json:"answers,omitempty"`
	Preferences     *struct {
		ForceADR *bool `json:"force_adr,omitempty"`
	} `json:"preferences,omitempty"`
	RepoPath *string `json:"repo_path,omitempty"`
}

func (f *Family) requireClarification(ctx context.Context, call *tool.Call, a requireArgs) (*requireResult, error) {
	res, err := f.turn(ctx, a, call.Client)
	if err != nil {
		return nil, asToolError(err)
	}
	return res, nil
}

// turn runs one call of require_clarification.
func (f *Family) turn(ctx context.Context, a requireArgs, client tool.Client) (*requireResult, error) {
	intention := strings.TrimSpace(a.UserIntention)
	if intention == "" {
		return nil, &envelopeError{code: codeValidationFailed, message: "user_intention is empty", recoveryHint: "Say what should be done"}
	}
	force := a.Preferences != nil && a.Preferences.ForceADR != nil && *a.Preferences.ForceADR
	var sess *session
	if a.SessionID != nil && *a.SessionID != "" {
		s, serr := f.sessions.get(*a.SessionID)
		if serr != nil {
			return nil, serr
		}
		sess = s
		sess.mu.Lock()
		defer sess.mu.Unlock()
		if err := sess.sameRequest(a, intention, client); err != nil {
			return nil, err
		}
		if a.OptionalContext != nil && strings.TrimSpace(*a.OptionalContext) != "" && !strings.Contains(sess.context, strings.TrimSpace(*a.OptionalContext)) {
			sess.context = strings.TrimSpace(sess.context + "\n\n" + strings.TrimSpace(*a.OptionalContext))
		}
	} else {
		root, serr := findRepo(a.RepoPath, client)
		if serr != nil {
			return nil, serr
		}
		sess = &session{root: root, intention: intention, forceADR: force, answers: map[string]any{}}
		if a.OptionalContext != nil {
			sess.context = strings.TrimSpace(*a.OptionalContext)
		}
		current, curErr := f.currentSnapshot(root)
		plan, fellBack, err := f.plan(ctx, sess, current)
		if err != nil {
			return nil, err
		}
		if plan.NeedsADR && curErr != nil {
			return nil, curErr // the previous ADR must be readable to carry its snapshot forward
		}
		sess.plan, sess.fallback = plan, fellBack
		sess.mu.Lock()
		defer sess.mu.Unlock()
		f.sessions.add(sess)
	}

	if err := sess.record(a.Answers); err != nil {
		return nil, err
	}
	if pending := sess.next(); len(pending) > 0 {
		sess.asked = appendNew(sess.asked, pending)
		answered := 0
		for _, id := range sess.asked {
			if _, ok := sess.answers[id]; ok {
				answered++
			}
		}
		out := &requireResult{Status: "needs_clarification", SessionID: sess.id, Questions: pending,
			Progress: progress{AskedSoFar: len(sess.asked), Answered: answered}}
		sess.warn(out)
		return out, nil
	}
	out, err := f.complete(ctx, sess)
	if err != nil {
		return nil, err
	}
	f.sessions.finish(sess.id)
	sess.warn(out)
	return out, nil
}

// warn adds the LLM fallback warning ("llm_fallback") to a reply when the
// deterministic planner stood in for an LLM that failed.
func (s *session) warn(out *requireResult) {
	if s.fallback {
		out.Warning, out.Message = llm.FallbackWarning, llm.FallbackMessage
	}
}

// sameRequest refuses a later turn that tries to change what the session is
// about: its request, its repository, its preferences.
func (s *session) sameRequest(a requireArgs, intention string, client tool.Client) error {
	if !strings.EqualFold(oneLine(intention), oneLine(s.intention)) {
		return &envelopeError{code: codeValidationFailed, message: "user_intention differs from the session's",
			details:      map[string]any{"session_intention": s.intention},
			recoveryHint: "Send the session's user_intention unchanged, or start a new session for a different request"}
	}
	if a.RepoPath != nil && *a.RepoPath != "" {
		if root, serr := findRepo(a.RepoPath, client); serr != nil || root != s.root {
			return &envelopeError{code: codeValidationFailed, message: "repo_path names another repository than the session's",
				details: map[string]any{"session_repo": s.root}, recoveryHint: "Omit repo_path on later turns, or start a new session"}
		}
	}
	if a.Preferences != nil && a.Preferences.ForceADR != nil && *a.Preferences.ForceADR != s.forceADR {
		return &envelopeError{code: codeValidationFailed, message: "preferences apply when a session starts and cannot change on a later turn",
			recoveryHint: "Start a new session with the preferences you want"}
	}
	return nil
}

// record validates answers and adds them to the session; nothing is kept
// unless every answer is valid. An answer may come before its question is
// shown (a client that knows the questions answers in one turn), as long as
// the question applies: a follow-up only with the answer it follows.
func (s *session) record(answers map[string]any) error {
	if len(answers) == 0 {
		return nil
	}
	invalid := map[string]string{}
	normal := map[string]any{}
	for id, v := range answers {
		i := slices.IndexFunc(s.plan.Questions, func(q Question) bool { return q.ID == id })
		if i < 0 {
			invalid[id] = "no such question in this session"
			continue
		}
		q := s.plan.Questions[i]
		if v == nil && q.Optional {
			normal[id] = "" // skipped on purpose
			continue
		}
		n, err := q.check(v)
		if err != nil {
			invalid[id] = err.Error()
			continue
		}
		normal[id] = n
	}
	merged := maps.Clone(s.answers)
	maps.Copy(merged, normal)
	for id := range normal {
		q := s.plan.Questions[slices.IndexFunc(s.plan.Questions, func(q Question) bool { return q.ID == id })]
		if !q.visibleTo(merged) {
			invalid[id] = "this question does not apply: it follows " + q.DependsOn + " = " + q.DependsValue
		} else if !slices.Contains(s.asked, id) && len(s.asked)+countNew(s.asked, normal) > MaxQuestions {
			invalid[id] = fmt.Sprintf("a session asks at most %d questions; start a new session for more", MaxQuestions)
		}
	}
	if len(invalid) > 0 {
		return &envelopeError{code: codeValidationFailed, message: "Some answers are not valid for their questions",
			details: map[string]any{"invalid_answers": invalid}, recoveryHint: "Answer the listed questions again"}
	}
	for id, v := range normal {
		s.answers[id] = v
		if !slices.Contains(s.asked, id) {
			s.asked = append(s.asked, id)
		}
	}
	return nil
}

func countNew(asked []string, answers map[string]any) int {
	n := 0
	for id := range answers {
		if !slices.Contains(asked, id) {
			n++
		}
	}
	return n
}

// next returns the questions to ask now: asked and still unanswered
// required ones, then questions that became visible, within the session's
// limit of MaxQuestions. Conditional questions appear only when their
// condition holds, as ordinary questions.
func (s *session) next() []Question {
	var out []Question
	budget := MaxQuestions - len(s.asked)
	for _, q := range s.plan.Questions {
		if !q.visibleTo(s.answers) {
			continue
		}
		if _, ok := s.answers[q.ID]; ok {
			continue
		}
		if slices.Contains(s.asked, q.ID) {
			if !q.Optional {
				out = append(out, q)
			}
			continue
		}
		if budget > 0 {
			out = append(out, q)
			budget--
		}
	}
	return out
}

func appendNew(asked []string, qs []Question) []string {
	for _, q := range qs {
		if !slices.Contains(asked, q.ID) {
			asked = append(asked, q.ID)
		}
	}
	return asked
}

// currentSnapshot is the latest ADR's snapshot (empty without ADRs).
func (f *Family) currentSnapshot(root string) (Snapshot, error) {
	d, err := openDocs(root, false)
	if err != nil {
		return Snapshot{}, nil // no docs/: no ADR
	}
	defer d.close()
	_, snap, err := d.latest()
	return snap, err
}

// plan asks the LLM when one is configured, else (or when it fails) the
// deterministic planner.
func (f *Family) plan(ctx context.Context, s *session, current Snapshot) (Plan, bool, error) {
	if f.llm != nil {
		lp, err := llm.Ask(ctx, f.llm, planSystem, planPrompt(s.intention, s.context, current), (*llmPlan).check)
		if err == nil {
			p := lp.plan()
			if s.forceADR && !p.NeedsADR {
				p = deterministicPlan(s.intention, s.context, true, current)
			}
			return p, false, nil
		}
		if ctx.Err() != nil {
			return Plan{}, false, ctx.Err()
		}
		f.log.Warn("clarification LLM failed; using the deterministic planner", zap.Error(err))
		return deterministicPlan(s.intention, s.context, s.forceADR, current), true, nil
	}
	return deterministicPlan(s.intention, s.context, s.forceADR, current), false, nil
}
