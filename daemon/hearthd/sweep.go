package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/hearth-mcp/hearth/pkg/sweep"
)

// sweepGrace is how long --kill waits after SIGTERM before SIGKILL.
const sweepGrace = 5 * time.Second

// sweepCmd is `hearthd sweep [--kill] [--grace D] [--json] [--session SID]...`:
// the MCP servers clients left behind on this account (pkg/sweep), listed,
// and with --kill ended. It needs no daemon: it reads the process table as
// the user, and never lists hearth's own upstreams.
func sweepCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("hearthd sweep", flag.ContinueOnError)
	fs.SetOutput(stderr)
	kill := fs.Bool("kill", false, "end every tree listed: SIGTERM, then SIGKILL after --grace")
	grace := fs.Duration("grace", sweepGrace, "how long --kill waits after SIGTERM")
	asJSON := fs.Bool("json", false, "print the list (and what --kill did) as JSON")
	var sessions sessionList
	fs.Var(&sessions, "session", "only trees whose top process is in session `SID` (repeatable; `ps -o sid= $$` is your terminal's)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: hearthd sweep [--kill] [--grace 5s] [--json] [--session SID]...")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "hearthd sweep: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	opts := sweep.Options{Sessions: sessions}
	found, err := sweep.Find(opts)
	if err != nil {
		fmt.Fprintln(stderr, "hearthd sweep:", err)
		return 1
	}
	var outcomes []sweep.Outcome
	if *kill && len(found) > 0 {
		if outcomes, err = sweep.Kill(context.Background(), found, opts, *grace); err != nil {
			fmt.Fprintln(stderr, "hearthd sweep:", err)
			return 1
		}
	}
	if *asJSON {
		out := struct {
			Orphans  []sweep.Orphan  `json:"orphans"`
			Outcomes []sweep.Outcome `json:"outcomes,omitempty"`
		}{found, outcomes}
		if out.Orphans == nil {
			out.Orphans = []sweep.Orphan{}
		}
		b, _ := json.MarshalIndent(out, "", "  ")
		stdout.Write(append(b, '\n'))
	} else {
		printOrphans(stdout, found, outcomes, *kill, *grace)
	}
	for _, o := range outcomes {
		if o.Left > 0 {
			return 1
		}
	}
	return 0
}

// printOrphans is the list for people.
func printOrphans(out io.Writer, found []sweep.Orphan, outcomes []sweep.Outcome, killed bool, grace time.Duration) {
	if len(found) == 0 {
		fmt.Fprintln(out, "no MCP server left behind by its client")
		return
	}
	fmt.Fprintf(out, "MCP servers left behind by their clients (%d):\n", len(found))
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "  PID\tNAME\tAGE\tRSS\tPROCESSES\tCLIENT")
	var total int64
	for _, o := range found {
		total += o.RSSBytes
		fmt.Fprintf(w, "  %d\t%s\t%s\t%.1f MB\t%d\t%s\n", o.Pid, o.Name, (time.Duration(o.AgeSeconds) * time.Second).String(),
			float64(o.RSSBytes)/1e6, len(o.Procs), dash(o.Client))
	}
	w.Flush()
	for _, o := range found {
		fmt.Fprintf(out, "  %d: %s\n", o.Pid, o.Command)
	}
	fmt.Fprintf(out, "  together %.1f MB\n", float64(total)/1e6)
	if !killed {
		fmt.Fprintf(out, "`hearthd sweep --kill` ends them (SIGTERM to every process of each tree, SIGKILL after %s).\n", grace)
		return
	}
	for i, o := range outcomes {
		switch {
		case o.Skipped != "":
			fmt.Fprintf(out, "  %d: not ended: %s\n", o.Pid, o.Skipped)
		case o.Left > 0:
			fmt.Fprintf(out, "  %d: %d of %d processes still there after SIGKILL\n", o.Pid, o.Left, o.Ended+o.Left)
		default:
			how := "on SIGTERM"
			if o.Killed > 0 {
				how = fmt.Sprintf("%d on SIGKILL after %s", o.Killed, grace)
			}
			fmt.Fprintf(out, "  %d: ended (%s, %d processes)\n", found[i].Pid, how, o.Ended)
		}
	}
}

// sessionList is the repeatable --session.
type sessionList []int

func (s *sessionList) String() string {
	parts := make([]string, len(*s))
	for i, v := range *s {
		parts[i] = strconv.Itoa(v)
	}
	return strings.Join(parts, ",")
}

func (s *sessionList) Set(v string) error {
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		return fmt.Errorf("a session is a positive process id, not %q", v)
	}
	*s = append(*s, n)
	return nil
}
