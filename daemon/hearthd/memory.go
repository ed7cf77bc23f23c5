package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/hearth-mcp/hearth/pkg/config"
	"github.com/hearth-mcp/hearth/pkg/guard"
	"github.com/hearth-mcp/hearth/pkg/memory"
	"github.com/hearth-mcp/hearth/pkg/memory/jsonl"
	"github.com/hearth-mcp/hearth/pkg/memory/store"
	"github.com/hearth-mcp/hearth/pkg/owner"
	"github.com/hearth-mcp/hearth/pkg/version"
)

// `hearthd memory import|export`: the official memory server's JSONL file
// into and out of the memory graph. The store has one owner
// (docs/decisions/0015-one-owner-per-home.md): when a daemon owns the data
// directory, the file goes through it (import_graph, read_graph); otherwise
// this process takes ownership for the moment it needs and opens the store
// itself: the SQLite file, or the PostgreSQL database the settings name
// (store_url, HEARTH_STORE_URL), which other daemons may be serving too
// (docs/decisions/0018-memory-graph.md, 0019-many-daemons-one-database.md).

const memoryUsage = `usage:
  hearthd memory import [--workspace NAME] FILE.jsonl
  hearthd memory export [--workspace NAME] [-o FILE]`

var workspaceRE = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

func memoryCmd(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, memoryUsage)
		return 2
	}
	sub, rest := args[0], args[1:]
	ws, file, out := store.DefaultWorkspace, "", ""
	for i := 0; i < len(rest); i++ {
		switch a := rest[i]; {
		case (a == "--workspace" || a == "-w") && i+1 < len(rest):
			ws = rest[i+1]
			i++
		case a == "-o" && i+1 < len(rest) && sub == "export":
			out = rest[i+1]
			i++
		case a != "" && a[0] != '-' && file == "" && sub == "import":
			file = a
		default:
			fmt.Fprintf(stderr, "hearthd memory %s: unexpected argument %q\n%s\n", sub, a, memoryUsage)
			return 2
		}
	}
	if !workspaceRE.MatchString(ws) {
		fmt.Fprintf(stderr, "hearthd memory: workspace %q: want 1 to 64 letters, digits, '.', '_' or '-'\n", ws)
		return 2
	}
	home, err := guard.Home(os.Getenv)
	if err != nil {
		fmt.Fprintln(stderr, "hearthd memory:", err)
		return 1
	}
	switch sub {
	case "import":
		if file == "" {
			fmt.Fprintln(stderr, memoryUsage)
			return 2
		}
		abs, err := filepath.Abs(file)
		if err != nil {
			fmt.Fprintln(stderr, "hearthd memory import:", err)
			return 1
		}
		return memoryImport(home, ws, abs, stdout, stderr)
	case "export":
		w := stdout
		if out != "" {
			f, err := os.OpenFile(out, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
			if err != nil {
				fmt.Fprintln(stderr, "hearthd memory export:", err)
				return 1
			}
			defer f.Close()
			w = f
		}
		code := memoryExport(home, ws, w, stderr)
		if code == 0 && out != "" {
			fmt.Fprintf(stderr, "hearthd memory export: wrote workspace %s to %s\n", ws, out)
		}
		return code
	}
	fmt.Fprintf(stderr, "hearthd memory: unknown command %q\n%s\n", sub, memoryUsage)
	return 2
}

// withGraph runs viaDaemon on the owner's socket when a daemon serves home,
// else opens the store as home's owner and runs direct.
func withGraph(home string, stderr io.Writer, viaDaemon func(socket string) int, direct func(store.Graph) int) int {
	deadline := time.Now().Add(ownerWait)
	for {
		rec, state, err := owner.Find(home)
		if err != nil {
			fmt.Fprintln(stderr, "hearthd memory:", err)
			return 1
		}
		switch {
		case state == owner.Serving && rec.Socket != "":
			return viaDaemon(rec.Socket)
		case state == owner.Serving:
			fmt.Fprintf(stderr, "hearthd memory: the data directory %s is owned by hearthd %s (pid %d), which serves no socket; run this while it is not running\n", home, rec.Mode, rec.PID)
			return 1
		case state == owner.Starting && time.Now().Before(deadline):
			time.Sleep(20 * time.Millisecond)
			continue
		}
		_, err = guard.Check(home, version.Tooling())
		var refusal *guard.Error
		if errors.As(err, &refusal) {
			fmt.Fprintln(stderr, "hearthd memory:", refusal.Message)
			return refusal.ExitCode
		}
		if err != nil {
			fmt.Fprintln(stderr, "hearthd memory:", err)
			return 1
		}
		lock, err := owner.Acquire(home)
		if errors.Is(err, owner.ErrHeld) && time.Now().Before(deadline) {
			continue // a daemon started meanwhile: go through it
		}
		if err != nil {
			fmt.Fprintln(stderr, "hearthd memory:", err)
			return 1
		}
		defer lock.Release()
		st, code := openGraph(home, stderr)
		if st == nil {
			return code
		}
		defer st.Close()
		return direct(st)
	}
}

// openGraph opens the store the settings name, as the data directory's
// owner: the PostgreSQL database of store_url, else the SQLite file. A
// database the version guard refuses exits with the guard's code.
func openGraph(home string, stderr io.Writer) (memory.Engines, int) {
	settings, err := config.Load(os.Getenv)
	if err != nil {
		fmt.Fprintln(stderr, "hearthd memory:", err)
		return nil, 2
	}
	st, err := memory.EngineFor(home, settings.Getenv, version.Tooling()).Open(context.Background(), nil)
	var refusal *guard.Error
	if errors.As(err, &refusal) {
		fmt.Fprintln(stderr, "hearthd memory:", refusal.Message)
		return nil, refusal.ExitCode
	}
	if err != nil {
		fmt.Fprintln(stderr, "hearthd memory:", err)
		return nil, 1
	}
	return st, 0
}

func memoryImport(home, ws, path string, stdout, stderr io.Writer) int {
	report := func(how string, read store.Subgraph, res store.ImportResult) {
		fmt.Fprintf(stdout, "imported %s into workspace %s (%s): read %d entities and %d relations; created %d entities and %d relations, added %d observations\n",
			path, ws, how, len(read.Entities), len(read.Relations), res.EntitiesCreated, res.RelationsCreated, res.ObservationsAdded)
	}
	return withGraph(home, stderr, func(socket string) int {
		var out struct {
			EntitiesRead      int `json:"entities_read"`
			RelationsRead     int `json:"relations_read"`
			EntitiesCreated   int `json:"entities_created"`
			ObservationsAdded int `json:"observations_added"`
			RelationsCreated  int `json:"relations_created"`
		}
		err := daemonTool(socket, memoryClientName, "import_graph", map[string]any{"path": path, "workspace_id": ws}, 5*time.Minute, &out)
		if err != nil && strings.Contains(err.Error(), "cannot read the file") {
			// The daemon may not see the file where we do (systemd's
			// PrivateTmp gives it a /tmp of its own): hand it a copy in the
			// data directory, which it always reads.
			var staged string
			if staged, err = stage(home, path); err == nil {
				defer os.Remove(staged)
				err = daemonTool(socket, memoryClientName, "import_graph", map[string]any{"path": staged, "workspace_id": ws}, 5*time.Minute, &out)
			}
		}
		if err != nil {
			fmt.Fprintln(stderr, "hearthd memory import:", err)
			return 1
		}
		report("through the daemon at "+socket, store.Subgraph{Entities: make([]store.Entity, out.EntitiesRead), Relations: make([]store.Relation, out.RelationsRead)},
			store.ImportResult{EntitiesCreated: out.EntitiesCreated, RelationsCreated: out.RelationsCreated, ObservationsAdded: out.ObservationsAdded})
		return 0
	}, func(g store.Graph) int {
		res, read, err := memory.ImportFile(context.Background(), g, ws, path)
		if err != nil {
			var le *jsonl.LineError
			if errors.As(err, &le) {
				fmt.Fprintf(stderr, "hearthd memory import: %s: nothing imported: %v\n", path, err)
			} else {
				fmt.Fprintln(stderr, "hearthd memory import:", err)
			}
			return 1
		}
		report("directly", read, res)
		return 0
	})
}

// stage copies path into home for the daemon to read, and returns the copy.
func stage(home, path string) (string, error) {
	src, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer src.Close()
	dst, err := os.CreateTemp(home, "import-*.jsonl")
	if err != nil {
		return "", err
	}
	if _, err := io.Copy(dst, src); err != nil {
		dst.Close()
		os.Remove(dst.Name())
		return "", err
	}
	return dst.Name(), dst.Close()
}

// exportPage is read_graph's page size for an export.
const exportPage = 5000

func memoryExport(home, ws string, out io.Writer, stderr io.Writer) int {
	w := jsonl.NewWriter(out)
	write := func(p store.GraphPage) error {
		for _, e := range p.Entities {
			if err := w.Entity(e); err != nil {
				return err
			}
		}
		for _, r := range p.Relations {
			if err := w.Relation(r); err != nil {
				return err
			}
		}
		return nil
	}
	code := withGraph(home, stderr, func(socket string) int {
		for cursor := ""; ; {
			var page struct {
				Entities  []memory.EntityJSON   `json:"entities"`
				Relations []memory.RelationJSON `json:"relations"`
				Next      string                `json:"nextCursor"`
			}
			args := map[string]any{"workspace_id": ws, "limit": exportPage}
			if cursor != "" {
				args["cursor"] = cursor
			}
			if err := daemonTool(socket, memoryClientName, "read_graph", args, time.Minute, &page); err != nil {
				fmt.Fprintln(stderr, "hearthd memory export:", err)
				return 1
			}
			var p store.GraphPage
			for _, e := range page.Entities {
				p.Entities = append(p.Entities, e.Store())
			}
			for _, r := range page.Relations {
				p.Relations = append(p.Relations, r.Store())
			}
			if err := write(p); err != nil {
				fmt.Fprintln(stderr, "hearthd memory export:", err)
				return 1
			}
			if cursor = page.Next; cursor == "" {
				return 0
			}
		}
	}, func(g store.Graph) int {
		for cursor := ""; ; {
			p, err := g.ReadGraph(context.Background(), ws, cursor, exportPage)
			if err == nil {
				err = write(p)
			}
			if err != nil {
				fmt.Fprintln(stderr, "hearthd memory export:", err)
				return 1
			}
			if cursor = p.Next; cursor == "" {
				return 0
			}
		}
	})
	if code == 0 {
		if err := w.Flush(); err != nil {
			fmt.Fprintln(stderr, "hearthd memory export:", err)
			return 1
		}
	}
	return code
}

// memoryClientName is what `hearthd memory` calls itself to the daemon.
const memoryClientName = "hearthd-memory"
