package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/hearth-mcp/hearth/pkg/workspace"
)

// indexWorker is `hearthd index-worker`: the child process index_build runs
// under the supervisor (workspace.WorkerJob). It reads the file list from
// stdin and writes progress and the result to stdout; SIGTERM (cancel,
// timeout) stops the build between files and leaves the previous index. Exit
// codes: 0 built, 1 failed, 2 a bad job, 130 stopped by a signal.
func indexWorker(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	job, err := parseWorkerJob(args, stderr)
	if err != nil {
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	err = workspace.RunWorkerJob(ctx, job, stdin, stdout)
	switch {
	case err == nil:
		return 0
	case errors.Is(err, workspace.ErrBadJob):
		fmt.Fprintln(stderr, "index-worker:", err)
		return 2
	case errors.Is(err, context.Canceled):
		fmt.Fprintln(stderr, "index-worker: stopped by a signal; the previous index is unchanged")
		return 130
	default:
		fmt.Fprintln(stderr, "index-worker:", err)
		return 1
	}
}

// parseWorkerJob reads the flags workspace.WorkerJob.Args writes.
func parseWorkerJob(args []string, stderr io.Writer) (workspace.WorkerJob, error) {
	fs := flag.NewFlagSet(workspace.WorkerCommand, flag.ContinueOnError)
	fs.SetOutput(stderr)
	var j workspace.WorkerJob
	fs.StringVar(&j.Repo, "repo", "", "repository root (absolute)")
	fs.StringVar(&j.Out, "out", "", "index file to write (absolute)")
	fs.StringVar(&j.Head, "head", "", "git HEAD at the build")
	fs.StringVar(&j.Source, "source", "walk", "how the file list was made: git or walk")
	fs.BoolVar(&j.Incremental, "incremental", true, "take unchanged files from the existing index")
	if err := fs.Parse(args); err != nil {
		return j, err
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "index-worker: unexpected argument %q\n", fs.Arg(0))
		return j, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	return j, nil
}
