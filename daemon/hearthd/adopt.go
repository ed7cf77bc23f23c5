package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/hearth-mcp/hearth/pkg/adopt"
	"github.com/hearth-mcp/hearth/pkg/endpoint"
	"github.com/hearth-mcp/hearth/pkg/secret"
)

// Exit codes of `hearthd adopt`.
const (
	adoptOK      = 0
	adoptRefused = 1 // a file was refused or left as it was (the output says which)
	adoptUsage   = 2
)

// listFlag collects a flag that may repeat and whose values may be
// comma-separated.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error {
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			*l = append(*l, s)
		}
	}
	return nil
}

// adoptCmd moves the stdio MCP servers of the user's clients behind hearth:
// a dry run by default (diffs and a table), --write to apply with a backup
// beside each file, --undo to restore from the backups.
func adoptCmd(args []string, stdout, stderr io.Writer, getenv func(string) string, now func() time.Time) int {
	fl := flag.NewFlagSet("hearthd adopt", flag.ContinueOnError)
	fl.SetOutput(stderr)
	write := fl.Bool("write", false, "apply the changes, backing each file up beside itself first")
	undo := fl.Bool("undo", false, "restore each file from the backup made by the write that left it as it is, if it has not changed since")
	secrets := fl.Bool("secrets", false, "move the literal credentials of entries' headers and env into hearth's store (hearthd secret), the entries naming them as ${secret:NAME}; with --write they are stored before the files are written")
	var only, except, share, projects listFlag
	fl.Var(&only, "only", "move only these servers (`NAME[,NAME]`)")
	fl.Var(&except, "except", "leave these servers (`NAME[,NAME]`)")
	fl.Var(&share, "share", "sharing mode of every moved server (`MODE`), or of some (NAME=MODE[,NAME=MODE]); modes: "+strings.Join(adopt.Modes, ", "))
	fl.Var(&projects, "project", "also the project's files in `DIR` (.mcp.json, .cursor/mcp.json, .vscode/mcp.json); may repeat")
	self, _ := os.Executable()
	shim := fl.String("command", defaultShim(runtime.GOOS, self, isFile, exec.LookPath), "the shim command moved entries run (an absolute path for a client whose PATH lacks it)")
	fl.Usage = func() {
		fmt.Fprintln(stderr, "usage: hearthd adopt [--write | --undo] [--secrets] [--only NAME[,NAME]] [--except NAME[,NAME]] [--share MODE | --share NAME=MODE[,...]] [--project DIR]... [--command PATH]")
		fl.PrintDefaults()
	}
	if err := fl.Parse(args); err != nil {
		return adoptUsage
	}
	if fl.NArg() > 0 {
		fmt.Fprintf(stderr, "hearthd adopt: unexpected argument %q\n", fl.Arg(0))
		return adoptUsage
	}
	if *write && *undo {
		fmt.Fprintln(stderr, "hearthd adopt: --write and --undo do not go together")
		return adoptUsage
	}
	if *undo && len(only)+len(except)+len(share) > 0 {
		fmt.Fprintln(stderr, "hearthd adopt: --undo restores whole files; --only, --except and --share do not apply")
		return adoptUsage
	}
	if why := adoptUnsupported(runtime.GOOS); why != "" && !*undo {
		// The moved entries would run `hearth run`, which does not serve
		// here: writing them would break the user's servers. --undo stays
		// allowed: restoring a file is always safe.
		fmt.Fprintln(stderr, "hearthd adopt:", why)
		return adoptRefused
	}
	env, err := adoptEnv(getenv)
	if err != nil {
		fmt.Fprintln(stderr, "hearthd adopt:", err)
		return adoptUsage
	}
	for i, p := range projects {
		if projects[i], err = filepath.Abs(p); err != nil {
			fmt.Fprintln(stderr, "hearthd adopt:", err)
			return adoptUsage
		}
	}
	locs := adopt.Locations(env, projects)
	if *undo {
		return undoAll(locs, stdout, env.Home)
	}

	files := loadConfigs(locs)
	opt := adopt.Options{Shim: *shim, Only: only, Except: except, Share: map[string]string{}, Secrets: *secrets}
	var vault *secret.Vault
	if *secrets {
		dir, err := endpoint.StateDir(endpoint.Getenv(getenv))
		if err == nil {
			vault, err = secret.Open(secret.Options{Dir: dir})
		}
		if err != nil {
			fmt.Fprintln(stderr, "hearthd adopt --secrets:", err)
			return adoptRefused
		}
		opt.SecretName = secretNamer(vault)
	}
	for _, s := range share {
		name, mode, named := strings.Cut(s, "=")
		if !named {
			name, mode = "", s
		}
		if !slices.Contains(adopt.Modes, mode) {
			fmt.Fprintf(stderr, "hearthd adopt: --share %s: the mode is one of %s\n", s, strings.Join(adopt.Modes, ", "))
			return adoptUsage
		}
		opt.Share[name] = mode
	}
	if msg := unknownNames(files, only, except, opt.Share); msg != "" {
		fmt.Fprintln(stderr, "hearthd adopt:", msg)
		return adoptUsage
	}
	if len(files) == 0 {
		fmt.Fprintln(stdout, "No MCP client config found. Looked for:")
		for _, l := range locs {
			fmt.Fprintf(stdout, "  %s\n", tilde(l.Path, env.Home))
		}
		return adoptOK
	}

	code := adoptOK
	var plans []*adopt.Plan
	for _, f := range files {
		p, err := f.Plan(opt)
		if err != nil {
			fmt.Fprintln(stderr, "hearthd adopt:", err)
			return adoptUsage
		}
		plans = append(plans, p)
		if f.Err != nil {
			code = adoptRefused
			continue
		}
		if p.Changed() {
			diff := p.Diff(tilde(f.Path, env.Home))
			for _, sc := range p.Secrets {
				// The lines it removes show what is in the file now: not
				// the credentials that leave it.
				diff = strings.ReplaceAll(diff, sc.Value, "********")
			}
			fmt.Fprint(stdout, diff)
			fmt.Fprintln(stdout)
		}
	}
	printPlanTable(stdout, plans, env.Home)
	for _, p := range plans {
		for _, sc := range p.Secrets {
			verb := "would move"
			if *write {
				verb = "moves"
			}
			fmt.Fprintf(stdout, "%s: %s %s of %s into the store as ${secret:%s}\n", tilde(p.File.Path, env.Home), verb, sc.Where, sc.Server, sc.Name)
		}
	}

	changed := 0
	for _, p := range plans {
		if p.File.Err == nil && p.Changed() {
			changed++
		}
	}
	fmt.Fprintln(stdout)
	for _, p := range plans {
		if p.File.Err != nil {
			fmt.Fprintf(stdout, "Refused %s: %v; it is left as it is.\n", tilde(p.File.Path, env.Home), p.File.Err)
		}
	}
	if changed > 0 && !strings.ContainsAny(*shim, `/\`) {
		if _, err := exec.LookPath(*shim); err != nil {
			// Clients start the entry with about this PATH, or a shorter one.
			fmt.Fprintf(stdout, "Note: %q is not on your PATH, so clients will not find it either: install it (go install ./shim/hearth) or give --command its absolute path.\n", *shim)
		}
	}
	switch {
	case changed == 0:
		fmt.Fprintln(stdout, "Nothing to change.")
	case !*write:
		fmt.Fprintf(stdout, "Dry run: nothing was changed. `hearthd adopt --write` changes %s, keeping a backup beside each.\n", plural(changed, "file"))
	default:
		for _, p := range plans {
			if p.File.Err != nil || !p.Changed() {
				continue
			}
			if err := storeSecrets(vault, p.Secrets); err != nil {
				fmt.Fprintf(stdout, "Not written: %s: %v\n", tilde(p.File.Path, env.Home), err)
				code = adoptRefused
				continue
			}
			backup, err := adopt.Write(p, now())
			if err != nil {
				fmt.Fprintf(stdout, "Not written: %v\n", err)
				code = adoptRefused
				continue
			}
			fmt.Fprintf(stdout, "Wrote %s (backup: %s).\n", tilde(p.File.Path, env.Home), filepath.Base(backup))
		}
		fmt.Fprintln(stdout, "Restart your clients (or reload their MCP servers) to start the servers through hearth; `hearthd adopt --undo` puts the files back.")
	}
	return code
}

// secretNamer keeps adopt's proposed name for a credential unless the
// store holds another value under it (or this run gave it to another),
// then adds -2, -3...
func secretNamer(v *secret.Vault) func(proposed, value string) string {
	given := map[string]string{}
	return func(proposed, value string) string {
		for i := 1; ; i++ {
			name := proposed
			if i > 1 {
				name = fmt.Sprintf("%s-%d", proposed, i)
			}
			if g, ok := given[name]; ok {
				if g == value {
					return name
				}
				continue
			}
			stored, ok, err := v.Get(secret.Static(name))
			if err != nil || !ok || stored == value {
				given[name] = value
				return name
			}
		}
	}
}

// storeSecrets stores the credentials a plan names before its file is
// written (nothing of them is printed).
func storeSecrets(v *secret.Vault, list []adopt.Secret) error {
	for _, sc := range list {
		if err := v.Set(secret.Static(sc.Name), sc.Value); err != nil {
			return fmt.Errorf("storing %s: %w", sc.Name, err)
		}
	}
	return nil
}

// adoptUnsupported says why adopt must not move entries on goos, or "":
// the moved entries run `hearth run`, which serves only where the shim
// reaches a daemon (Linux, macOS and Windows;
// docs/decisions/0044-platforms.md, 0047-windows-socket.md).
func adoptUnsupported(goos string) string {
	switch goos {
	case "linux", "darwin", "windows":
		return ""
	}
	return fmt.Sprintf("not supported on %s yet: the entries it moves would run `hearth run`, and the shim does not serve on %s, so your MCP servers would stop working; nothing was changed", goos, goos)
}

// defaultShim is the command moved entries run unless --command says: on
// Unix "hearth", found on the PATH clients start it with; on Windows the
// full path of hearth.exe, beside this hearthd.exe or else on PATH (what a
// Windows client is given for PATH is less predictable, and an absolute
// path needs no search), "hearth.exe" when neither has it. (self is this
// executable; the JSON encoder escapes the path's backslashes.)
func defaultShim(goos, self string, isFile func(string) bool, lookPath func(string) (string, error)) string {
	if goos != "windows" {
		return "hearth"
	}
	if i := strings.LastIndexAny(self, `\/`); i >= 0 {
		if beside := self[:i+1] + "hearth.exe"; isFile(beside) {
			return beside
		}
	}
	if p, err := lookPath("hearth.exe"); err == nil && (strings.HasPrefix(p, `\\`) || len(p) > 2 && p[1] == ':') {
		return p
	}
	return "hearth.exe"
}

func isFile(p string) bool { fi, err := os.Stat(p); return err == nil && fi.Mode().IsRegular() }

func adoptEnv(getenv func(string) string) (adopt.Env, error) {
	home := getenv("HOME")
	if runtime.GOOS == "windows" {
		// The profile, as endpoint.UserHome takes it there: HOME comes
		// only from some shells.
		home = getenv("USERPROFILE")
	}
	if home == "" {
		var err error
		if home, err = os.UserHomeDir(); err != nil {
			return adopt.Env{}, err
		}
	}
	return adopt.Env{Home: home, Getenv: getenv}, nil
}

// loadConfigs reads the files that exist; one that cannot be read or
// parsed is kept, with its error, to be shown as refused.
func loadConfigs(locs []adopt.Location) []*adopt.File {
	var files []*adopt.File
	for _, l := range locs {
		f, err := adopt.Load(l)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			f = &adopt.File{Location: l, Err: err}
		}
		files = append(files, f)
	}
	return files
}

// unknownNames says which names given to --only, --except or --share
// match no server in any file: most likely a typo, which must not pass as
// "nothing selected".
func unknownNames(files []*adopt.File, only, except []string, share map[string]string) string {
	known := map[string]bool{}
	for _, f := range files {
		for _, s := range f.Servers {
			known[s.Name] = true
		}
	}
	var unknown []string
	for _, n := range append(append(slices.Clone(only), except...), mapKeys(share)...) {
		if n != "" && !known[n] && !slices.Contains(unknown, n) {
			unknown = append(unknown, n)
		}
	}
	if len(unknown) == 0 {
		return ""
	}
	names := mapKeys(known)
	return fmt.Sprintf("no server is named %s (servers found: %s)", strings.Join(unknown, ", "), strings.Join(names, ", "))
}

func mapKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func printPlanTable(out io.Writer, plans []*adopt.Plan, home string) {
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "CLIENT\tFILE\tSERVER\tTRANSPORT\tWHAT HAPPENS")
	for _, p := range plans {
		file := tilde(p.File.Path, home)
		if p.File.Err != nil {
			fmt.Fprintf(w, "%s\t%s\t-\t-\trefused: the file does not parse or is not a config\n", p.File.Client, file)
			continue
		}
		if len(p.Decisions) == 0 {
			fmt.Fprintf(w, "%s\t%s\t-\t-\tno servers\n", p.File.Client, file)
		}
		for _, d := range p.Decisions {
			where := file
			if d.Scope != "" {
				where += " [project " + tilde(d.Scope, home) + "]"
			}
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", p.File.Client, where, d.Name, dash(d.Transport), d.Describe())
		}
	}
	w.Flush()
}

// undoAll restores every file that has a backup of adopt's.
func undoAll(locs []adopt.Location, out io.Writer, home string) int {
	code, any := adoptOK, false
	for _, l := range locs {
		r, b, err := adopt.Undo(l.Path)
		name := tilde(l.Path, home)
		switch {
		case err != nil:
			fmt.Fprintf(out, "Not restored %s: %v\n", name, err)
			code, any = adoptRefused, true
		case r == adopt.Restored:
			fmt.Fprintf(out, "Restored %s from %s.\n", name, filepath.Base(b.Path))
			any = true
		case r == adopt.Changed:
			why := "it changed since adopt wrote it"
			if _, err := os.Stat(l.Path); os.IsNotExist(err) {
				why = "it was removed since adopt wrote it"
			}
			fmt.Fprintf(out, "Left %s as it is: %s. Its backup from before that write is %s.\n", name, why, b.Path)
			code, any = adoptRefused, true
		}
	}
	if !any {
		fmt.Fprintln(out, "Nothing to undo: no file has a backup of hearthd adopt's.")
	}
	return code
}

// tilde shortens a path under home to ~/...
func tilde(path, home string) string {
	if rel, err := filepath.Rel(home, path); err == nil && home != "" && !strings.HasPrefix(rel, "..") && rel != "." {
		return "~/" + filepath.ToSlash(rel)
	}
	return path
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
