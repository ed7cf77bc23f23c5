package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hearth-mcp/hearth/pkg/workspace"
)

// The flags index_build writes (WorkerJob.Args) are the flags index-worker
// reads, for every field.
func TestWorkerJobFlagsRoundTrip(t *testing.T) {
	for _, job := range []workspace.WorkerJob{
		{Repo: "/r", Out: "/o.idx", Head: "abc", Source: "git", Incremental: true},
		{Repo: "/r s", Out: "/o", Head: "", Source: "walk", Incremental: false},
	} {
		got, err := parseWorkerJob(job.Args(), io.Discard)
		if err != nil || got != job {
			t.Errorf("%+v: parsed %+v, %v", job, got, err)
		}
	}
}

func TestIndexWorkerExitCodes(t *testing.T) {
	repo := t.TempDir()
	os.WriteFile(filepath.Join(repo, "a.txt"), []byte("hello\n"), 0o600)
	out := filepath.Join(t.TempDir(), "x.idx")
	cases := []struct {
		name  string
		args  []string
		list  string
		code  int
		inOut string
		inErr string
	}{
		{"built", []string{"--repo", repo, "--out", out}, "a.txt\x00", 0, `"result":`, ""},
		{"relative repository", []string{"--repo", "rel", "--out", out}, "", 2, "", "absolute"},
		{"path outside", []string{"--repo", repo, "--out", out}, "../etc/passwd\x00", 2, "", "not inside the repository"},
		{"unknown flag", []string{"--nope"}, "", 2, "", "flag provided but not defined"},
		{"extra argument", []string{"--repo", repo, "--out", out, "stray"}, "", 2, "", "unexpected argument"},
		{"missing repository", []string{"--repo", filepath.Join(repo, "gone"), "--out", out}, "", 1, "", "opening the repository"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var stdout, stderr strings.Builder
			code := indexWorker(c.args, strings.NewReader(c.list), &stdout, &stderr)
			if code != c.code || !strings.Contains(stdout.String(), c.inOut) || !strings.Contains(stderr.String(), c.inErr) {
				t.Errorf("exit %d (want %d), stdout %q, stderr %q", code, c.code, stdout.String(), stderr.String())
			}
		})
	}
}
