package workspace

import (
	"context"
	"errors"
	"time"

	"github.com/hearth-mcp/hearth/pkg/tool"
	"github.com/hearth-mcp/hearth/pkg/workspace/index"
)

type searchArgs struct {
	Query         string `json:"query"`
	RepoPath      string `json:"repo_path,omitempty"`
	Regex         bool   `json:"regex,omitempty"`
	CaseSensitive bool   `json:"case_sensitive,omitempty"`
	PathGlob      string `json:"path_glob,omitempty"`
	Limit         *int   `json:"limit,omitempty"`
	ContextLines  *int   `json:"context_lines,omitempty"`
}

type searchHit struct {
	Path   string   `json:"path"`
	Line   int      `json:"line"`
	Column int      `json:"column"`
	Text   string   `json:"text"`
	Before []string `json:"before"`
	After  []string `json:"after"`
}

type searchStats struct {
	Candidates int  `json:"candidates"` // files the trigram index left to check
	Scanned    int  `json:"scanned"`    // files checked before the limit was reached
	Narrowed   bool `json:"narrowed"`   // the trigram index narrowed the files; false: every file was scanned
}

type searchResult struct {
	Repo      string      `json:"repo"`
	Hits      []searchHit `json:"hits"`
	Truncated bool        `json:"truncated"`
	Stats     searchStats `json:"stats"`
	IndexedAt time.Time   `json:"index_built_at"`
	Files     int         `json:"index_files"`
}

func (f *Family) search(ctx context.Context, call *tool.Call, a searchArgs) (*searchResult, error) {
	q := index.Query{Pattern: a.Query, Regex: a.Regex, CaseSensitive: a.CaseSensitive, Limit: searchLimitDefault, Context: contextLinesDefault}
	if a.Limit != nil {
		q.Limit = *a.Limit
	}
	if a.ContextLines != nil {
		q.Context = *a.ContextLines
	}
	if a.PathGlob != "" {
		m, err := compileGlob(a.PathGlob)
		if err != nil {
			return nil, tool.Errorf(tool.InvalidRequest, "%v", err)
		}
		q.Path = m
	}
	if _, err := index.Compile(q); err != nil {
		return nil, tool.Errorf(tool.InvalidRequest, "query is not a valid RE2 regular expression: %v", err).
			With("hint", "RE2 has no backreferences or lookaround; pass regex:false to search for the text literally")
	}
	root, err := f.root(a.RepoPath, call.Client)
	if err != nil {
		return nil, err
	}
	h, err := f.acquire(root)
	if err != nil {
		return nil, f.noIndex(root, err)
	}
	defer f.release(h)
	hits, st, err := h.ix.Search(ctx, q)
	if err != nil {
		return nil, err
	}
	r := searchResult{
		Repo: root, Hits: make([]searchHit, len(hits)), Truncated: st.Truncated,
		Stats:     searchStats{Candidates: st.Candidates, Scanned: st.Scanned, Narrowed: st.Indexed},
		IndexedAt: h.ix.Meta().BuiltAt, Files: h.ix.Len(),
	}
	for i, hit := range hits {
		r.Hits[i] = searchHit{Path: hit.Path, Line: hit.Line, Column: hit.Column, Text: hit.Text, Before: nonNil(hit.Before), After: nonNil(hit.After)}
	}
	return &r, nil
}

// noIndex turns a failure to open root's index into the tool error.
func (f *Family) noIndex(root string, err error) error {
	if errors.Is(err, errNoIndexFile) {
		return tool.Errorf(tool.NoIndex, "%s has no index yet", root).
			With("hint", "run index_build for this repository first").With("repo", root)
	}
	if errors.Is(err, index.ErrCorrupt) {
		return tool.Errorf(tool.NoIndex, "the index of %s is damaged (%v)", root, err).
			With("hint", "run index_build with incremental:false to rebuild it").With("repo", root)
	}
	return tool.Errorf(tool.Internal, "cannot open the index of %s: %v", root, err)
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
