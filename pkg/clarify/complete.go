package clarify

import (
	"context"
	"slices"
	"strings"

	"go.uber.org/zap"

	"github.com/hearth-mcp/hearth/pkg/llm"
)

// complete writes a finished session's artifacts: with an ADR, the ADR
// (exclusively, never over another file), the projection and the task;
// without, the task alone. The previous task is archived first.
func (f *Family) complete(ctx context.Context, s *session) (*requireResult, error) {
	clar := s.clarifications()
	var decisions Snapshot
	title, summary := s.intention, ""
	if s.plan.NeedsADR {
		decisions, title, summary = f.extract(ctx, s)
		if len(decisions) == 0 {
			return nil, &envelopeError{code: codePatchExtraction, message: "No architecture decision could be taken from the answers",
				details: map[string]any{"session_id": s.id}, recoveryHint: "Retry: start a new session and answer the questions"}
		}
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}

	f.writeMu.Lock()
	defer f.writeMu.Unlock()
	d, err := openDocs(s.root, true)
	if err != nil {
		return nil, err
	}
	defer d.close()
	now := f.now()
	var artifacts []artifactJSON
	adrUID := ""
	if s.plan.NeedsADR {
		prev, snap, err := d.latest()
		if err != nil {
			return nil, err
		}
		next := snap.clone()
		for c, kv := range decisions {
			if next[c] == nil {
				next[c] = map[string]string{}
			}
			for k, v := range kv {
				next[c][k] = v
			}
		}
		doc := adrDoc{title: title, date: stamp(now), previous: prev.uid, intention: s.intention, context: s.context,
			changed: sortedKeys(decisions), decisions: decisions, clarifications: clar, snapshot: next}
		var name string
		for attempt := 0; ; attempt++ {
			doc.uid = f.uids.next()
			name = adrDir + "/" + doc.uid + "_" + slug(adrSlug(decisions, title)) + ".md"
			err = d.writeNew(name, renderADR(doc))
			if err == nil || attempt == 3 || !isExist(err) {
				break
			}
		}
		if err != nil {
			return nil, err
		}
		adrUID = doc.uid
		artifacts = append(artifacts, artifactJSON{Path: rel(name), Type: "adr", UID: doc.uid})
	}
	archived, err := d.archiveTask(f.uids.next)
	if err != nil {
		return nil, err
	}
	if archived != "" {
		artifacts = append(artifacts, artifactJSON{Path: archived, Type: "task_archive", UID: strings.SplitN(strings.TrimPrefix(archived, rel(archiveDir)+"/"), "_", 2)[0]})
	}
	task := taskDoc{uid: f.uids.next(), title: s.intention, created: stamp(now), adr: adrUID,
		intention: s.intention, context: s.context, clarifications: clar, decisions: decisions}
	if err := d.replace(taskFile, renderTask(task)); err != nil {
		return nil, err
	}
	artifacts = append(artifacts, artifactJSON{Path: rel(taskFile), Type: "task"})
	if s.plan.NeedsADR {
		if _, _, _, err := d.projection(); err != nil {
			return nil, err
		}
		artifacts = append(artifacts, artifactJSON{Path: rel(projectionFile), Type: "projection"})
	}
	if summary == "" {
		if s.plan.NeedsADR {
			summary = describe(decisions) + " documented and task created."
		} else {
			summary = "Task created: " + oneLine(s.intention) + " (no ADR: " + s.plan.DecisionHint + ")."
		}
	}
	return &requireResult{Status: "completed", Artifacts: artifacts, Summary: summary}, nil
}

// clarifications pairs each answered question with its answer, in the order
// asked; a follow-up's answer replaces the bare "Other (specify)".
func (s *session) clarifications() [][2]string {
	var out [][2]string
	for _, id := range s.asked {
		v, ok := s.answers[id]
		if !ok || answerText(v) == "" {
			continue
		}
		for _, q := range s.plan.Questions {
			if q.ID == id {
				out = append(out, [2]string{q.Question, answerText(v)})
			}
		}
	}
	return out
}

// extract turns the answers into decisions: through the LLM when one is
// configured (falling back on failure), else by each question's place in
// the snapshot.
func (f *Family) extract(ctx context.Context, s *session) (Snapshot, string, string) {
	det := s.deterministicDecisions()
	if f.llm == nil || s.fallback {
		return det, s.intention, ""
	}
	var qa [][4]string
	for _, id := range s.asked {
		if v, ok := s.answers[id]; ok {
			for _, q := range s.plan.Questions {
				if q.ID == id {
					qa = append(qa, [4]string{q.Question, answerText(v), q.Category, q.Key})
				}
			}
		}
	}
	x, err := llm.Ask(ctx, f.llm, extractSystem, extractPrompt(s.intention, qa), (*llmExtract).check)
	if err != nil {
		if ctx.Err() == nil {
			f.log.Warn("clarification LLM failed to extract decisions; using the answers as they are", zap.Error(err))
			s.fallback = true
		}
		return det, s.intention, ""
	}
	title := s.intention
	if strings.TrimSpace(x.Title) != "" {
		title = x.Title
	}
	return Snapshot(x.Decisions), title, strings.TrimSpace(x.Summary)
}

func (s *session) deterministicDecisions() Snapshot {
	out := Snapshot{}
	for _, q := range s.plan.Questions {
		v, ok := s.answers[q.ID]
		if !ok || q.Category == "" || q.Key == "" {
			continue
		}
		text := answerText(v)
		if text == "" || text == Other {
			continue // a bare "Other (specify)" waits for its follow-up
		}
		if out[q.Category] == nil {
			out[q.Category] = map[string]string{}
		}
		out[q.Category][q.Key] = text
	}
	return out
}

// describe is the summary's start: "OAuth authentication strategy"-like
// text built from the decisions.
func describe(d Snapshot) string {
	var parts []string
	for _, c := range sortedKeys(d) {
		var vals []string
		for _, k := range sortedKeys(d[c]) {
			vals = append(vals, k+" "+d[c][k])
		}
		parts = append(parts, c+" ("+strings.Join(vals, ", ")+")")
	}
	return strings.Join(parts, "; ")
}

// adrSlug is the decorative part of an ADR's name: its categories, else
// its title.
func adrSlug(d Snapshot, title string) string {
	cats := sortedKeys(d)
	if len(cats) > 0 && len(cats) <= 3 && !slices.Contains(cats, "Decisions") {
		return strings.Join(cats, "-")
	}
	return title
}
