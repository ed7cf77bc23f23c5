package clarify

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/hearth-mcp/hearth/pkg/safefile"
)

// The repository contract: where Preflights keeps its files, relative to the
// repository root.
const (
	docsDir        = "docs"
	adrDir         = "adr"          // inside docs
	archiveDir     = "archive/task" // inside docs
	taskFile       = "CURRENT_TASK.md"
	projectionFile = "ARCHITECTURE_STATE.md"
	part1Heading   = "## PART 1 — Architecture snapshot"
)

// Snapshot is the architecture: category → key → value.
type Snapshot map[string]map[string]string

func (s Snapshot) clone() Snapshot {
	out := make(Snapshot, len(s))
	for c, kv := range s {
		out[c] = make(map[string]string, len(kv))
		for k, v := range kv {
			out[c][k] = v
		}
	}
	return out
}

// docs is a repository's docs/ directory, opened so that no path can leave
// it: os.Root refuses "..", absolute names and symbolic links pointing out.
type docs struct {
	root *os.Root
	repo string
}

func openDocs(repo string, create bool) (*docs, error) {
	r, err := os.OpenRoot(repo)
	if err != nil {
		return nil, fsError(repo, err)
	}
	defer r.Close()
	if create {
		if err := r.MkdirAll(docsDir, 0o755); err != nil {
			return nil, fsError(path.Join(repo, docsDir), err)
		}
	}
	d, err := safefile.OpenRootIn(r, docsDir) // a FIFO there is refused, not opened
	if err != nil {
		return nil, fsError(path.Join(repo, docsDir), err)
	}
	return &docs{root: d, repo: repo}, nil
}

func (d *docs) close() { d.root.Close() }

// readFile reads the file name inside docs/ only if it is a regular file: a
// FIFO put there would block the call in open(2), a device never end (see
// pkg/safefile).
func (d *docs) readFile(name string) ([]byte, error) { return safefile.ReadFileIn(d.root, name) }

// rel is the repository-relative path of a name inside docs/.
func rel(name string) string { return path.Join(docsDir, name) }

// writeNew creates name with data, atomically and exclusively: the content
// goes to a temporary file that is then hard-linked to name, which fails if
// name exists. An immutable document is never overwritten.
func (d *docs) writeNew(name string, data []byte) error {
	if err := d.root.MkdirAll(path.Dir(name), 0o755); err != nil {
		return fsError(rel(name), err)
	}
	tmp, err := d.writeTemp(path.Dir(name), data)
	if err != nil {
		return fsError(rel(name), err)
	}
	defer d.root.Remove(tmp)
	if err := d.root.Link(tmp, name); err != nil {
		return fsError(rel(name), err)
	}
	return nil
}

// replace writes name atomically (temporary file and rename), for the
// mutable documents: CURRENT_TASK.md and the projection.
func (d *docs) replace(name string, data []byte) error {
	tmp, err := d.writeTemp(path.Dir(name), data)
	if err != nil {
		return fsError(rel(name), err)
	}
	if err := d.root.Rename(tmp, name); err != nil {
		d.root.Remove(tmp)
		return fsError(rel(name), err)
	}
	return nil
}

func (d *docs) writeTemp(dir string, data []byte) (string, error) {
	var b [8]byte
	rand.Read(b[:])
	tmp := path.Join(dir, ".tmp-"+hex.EncodeToString(b[:]))
	f, err := d.root.OpenFile(tmp, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return "", err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		d.root.Remove(tmp)
		return "", err
	}
	return tmp, nil
}

// adrFile is one ADR on disk.
type adrFile struct {
	uid  string
	name string // inside docs/, e.g. adr/<UID>_<slug>.md
}

// adrs lists the ADRs by UID, oldest first. Files whose names do not start
// with a UID (a README) are not ADRs.
func (d *docs) adrs() ([]adrFile, error) {
	entries, err := safefile.ReadDirIn(d.root, adrDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fsError(rel(adrDir), err)
	}
	var out []adrFile
	for _, e := range entries {
		n := e.Name()
		if !e.Type().IsRegular() || !strings.HasSuffix(n, ".md") || len(n) < 25 || !uidPattern.MatchString(n[:25]) {
			continue
		}
		if rest := n[25:]; rest != ".md" && !strings.HasPrefix(rest, "_") {
			continue
		}
		out = append(out, adrFile{uid: n[:25], name: path.Join(adrDir, n)})
	}
	slices.SortFunc(out, func(a, b adrFile) int { return strings.Compare(a.uid, b.uid) })
	return out, nil
}

// latest returns the latest ADR and its snapshot, or a zero adrFile when
// there is none.
func (d *docs) latest() (adrFile, Snapshot, error) {
	list, err := d.adrs()
	if err != nil || len(list) == 0 {
		return adrFile{}, Snapshot{}, err
	}
	last := list[len(list)-1]
	b, err := d.readFile(last.name)
	if err != nil {
		return adrFile{}, nil, fsError(rel(last.name), err)
	}
	snap, err := parseADR(rel(last.name), last.uid, b)
	return last, snap, err
}

// ADR documents.

type adrDoc struct {
	uid, title, date, previous string
	intention, context         string
	changed                    []string // categories this decision changes
	decisions                  Snapshot // what it decides
	clarifications             [][2]string
	snapshot                   Snapshot // the whole architecture after it
}

func renderADR(a adrDoc) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# ADR %s: %s\n\n", a.uid, oneLine(a.title))
	fmt.Fprintf(&b, "- UID: %s\n- Date: %s\n- Previous ADR: %s\n", a.uid, a.date, orNone(a.previous))
	fmt.Fprintf(&b, "- Categories changed: %s\n", strings.Join(a.changed, ", "))
	fmt.Fprintf(&b, "- Snapshot categories: %s\n\n", strings.Join(sortedKeys(a.snapshot), ", "))
	b.WriteString("## Context\n\n" + strings.TrimSpace(a.intention) + "\n")
	if c := strings.TrimSpace(a.context); c != "" {
		b.WriteString("\n" + c + "\n")
	}
	b.WriteString("\n## Decision\n\n")
	for _, c := range sortedKeys(a.decisions) {
		for _, k := range sortedKeys(a.decisions[c]) {
			fmt.Fprintf(&b, "- %s / %s: %s\n", c, k, oneLine(a.decisions[c][k]))
		}
	}
	if len(a.clarifications) > 0 {
		b.WriteString("\n## Clarifications\n\n")
		for _, qa := range a.clarifications {
			fmt.Fprintf(&b, "- %s %s\n", oneLine(qa[0]), oneLine(qa[1]))
		}
	}
	b.WriteString("\n" + renderSnapshot(a.snapshot))
	b.WriteString("\n## PART 2 — Consequences\n\n")
	b.WriteString("- This ADR is immutable: a later decision is a new ADR with a later UID.\n")
	b.WriteString("- The work that implements it is described in docs/CURRENT_TASK.md.\n")
	return b.Bytes()
}

func renderSnapshot(s Snapshot) string {
	var b strings.Builder
	b.WriteString(part1Heading + "\n")
	for _, c := range sortedKeys(s) {
		fmt.Fprintf(&b, "\n### %s\n\n", c)
		for _, k := range sortedKeys(s[c]) {
			fmt.Fprintf(&b, "- %s: %s\n", k, oneLine(s[c][k]))
		}
	}
	return b.String()
}

// parseADR reads an ADR's snapshot (PART 1) and checks it against its own
// header: every category the header lists must be there.
func parseADR(file, uid string, b []byte) (Snapshot, error) {
	header := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "## ") {
			break
		}
		if k, v, ok := strings.Cut(strings.TrimPrefix(line, "- "), ": "); ok && strings.HasPrefix(line, "- ") {
			header[k] = strings.TrimSpace(v)
		}
	}
	if header["UID"] != uid {
		return nil, parseError(file, fmt.Sprintf("the header's UID line (%q) does not match the file name's UID %s", header["UID"], uid))
	}
	snap, err := parseSnapshot(file, b)
	if err != nil {
		return nil, err
	}
	var missing []string
	if list := header["Snapshot categories"]; list != "" {
		for _, c := range strings.Split(list, ",") {
			if c = strings.TrimSpace(c); c != "" && len(snap[c]) == 0 {
				missing = append(missing, c)
			}
		}
	}
	if len(missing) > 0 {
		return nil, &envelopeError{code: codeValidationFailed, message: "ADR snapshot validation failed",
			details:      map[string]any{"file": file, "missing_keys": missing},
			recoveryHint: "Review previous ADR and retry: restore the missing categories in its PART 1 (ADRs are immutable; the file was edited)"}
	}
	return snap, nil
}

// parseSnapshot reads the "PART 1" section: "### Category" headings, each
// followed by "- Key: Value" lines.
func parseSnapshot(file string, b []byte) (Snapshot, error) {
	i := bytes.Index(b, []byte(part1Heading))
	if i < 0 {
		return nil, parseError(file, "it has no \""+part1Heading+"\" section")
	}
	snap := Snapshot{}
	cat := ""
	sc := bufio.NewScanner(bytes.NewReader(b[i+len(part1Heading):]))
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimRight(sc.Text(), " \t\r")
		switch {
		case line == "":
		case strings.HasPrefix(line, "### "):
			cat = strings.TrimSpace(line[4:])
			if cat == "" {
				return nil, parseError(file, fmt.Sprintf("an empty category heading %d lines into PART 1", n))
			}
			if snap[cat] == nil {
				snap[cat] = map[string]string{}
			}
		case strings.HasPrefix(line, "## "), strings.HasPrefix(line, "# "):
			return snap, nil
		case strings.HasPrefix(line, "- "):
			k, v, ok := strings.Cut(line[2:], ": ")
			if !ok || strings.TrimSpace(k) == "" {
				return nil, parseError(file, fmt.Sprintf("%q in PART 1 is not \"- Key: Value\"", line))
			}
			if cat == "" {
				return nil, parseError(file, fmt.Sprintf("%q in PART 1 comes before any \"### Category\"", line))
			}
			snap[cat][strings.TrimSpace(k)] = strings.TrimSpace(v)
		default:
			return nil, parseError(file, fmt.Sprintf("unexpected line %q in PART 1", line))
		}
	}
	return snap, nil
}

// Projection (ARCHITECTURE_STATE.md): PART 1 of the latest ADR.

func renderProjection(a adrFile, s Snapshot) []byte {
	var b bytes.Buffer
	b.WriteString("# Architecture State\n\n")
	fmt.Fprintf(&b, "<!-- Generated from docs/%s. Do not edit: it is regenerated from the latest ADR and safe to delete. -->\n\n", a.name)
	fmt.Fprintf(&b, "- UID: %s\n- Source: docs/%s\n\n", a.uid, a.name)
	b.WriteString(renderSnapshot(s))
	return b.Bytes()
}

// projection returns the architecture per the projection file, rewriting the
// file from the latest ADR when it is missing, stale or damaged: it is never
// a source of truth. uid is "" when there is no ADR.
func (d *docs) projection() (uid string, snap Snapshot, regenerated bool, err error) {
	last, want, err := d.latest()
	if err != nil {
		return "", nil, false, err
	}
	if last.uid == "" {
		return "", Snapshot{}, false, nil
	}
	if b, err := d.readFile(projectionFile); err == nil && headerValue(b, "UID") == last.uid {
		if s, perr := parseSnapshot(rel(projectionFile), b); perr == nil {
			return last.uid, s, false, nil
		}
	}
	if err := d.replace(projectionFile, renderProjection(last, want)); err != nil {
		return "", nil, false, err
	}
	return last.uid, want, true, nil
}

// Tasks.

type taskDoc struct {
	uid, title, created, adr string
	intention, context       string
	clarifications           [][2]string
	decisions                Snapshot
}

func renderTask(t taskDoc) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# Current Task: %s\n\n", oneLine(t.title))
	fmt.Fprintf(&b, "- UID: %s\n- Created: %s\n- ADR: %s\n\n", t.uid, t.created, orNone(t.adr))
	b.WriteString("## Intention\n\n" + strings.TrimSpace(t.intention) + "\n")
	if c := strings.TrimSpace(t.context); c != "" {
		b.WriteString("\n## Context\n\n" + c + "\n")
	}
	if len(t.clarifications) > 0 {
		b.WriteString("\n## Clarifications\n\n")
		for _, qa := range t.clarifications {
			fmt.Fprintf(&b, "- %s %s\n", oneLine(qa[0]), oneLine(qa[1]))
		}
	}
	if len(t.decisions) > 0 {
		b.WriteString("\n## Decisions to follow\n\n")
		for _, c := range sortedKeys(t.decisions) {
			for _, k := range sortedKeys(t.decisions[c]) {
				fmt.Fprintf(&b, "- %s / %s: %s\n", c, k, oneLine(t.decisions[c][k]))
			}
		}
		fmt.Fprintf(&b, "\nSee docs/ARCHITECTURE_STATE.md for the whole architecture and the ADR %s for the reasoning.\n", t.adr)
	}
	b.WriteString("\n## Done when\n\n- The intention above is implemented")
	if len(t.decisions) > 0 {
		b.WriteString(" following the decisions listed")
	}
	b.WriteString(", with tests, and nothing else is changed.\n")
	return b.Bytes()
}

// archiveTask moves the current task (if any) to archive/task/<UID>_<slug>.md
// before it is replaced. A task file without a usable UID (written by hand)
// is archived under a new one: nothing is lost.
func (d *docs) archiveTask(newUID func() string) (archived string, err error) {
	b, err := d.readFile(taskFile)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fsError(rel(taskFile), err)
	}
	uid := headerValue(b, "UID")
	if !uidPattern.MatchString(uid) {
		uid = newUID()
	}
	title := "task"
	if first, _, _ := bytes.Cut(b, []byte("\n")); bytes.HasPrefix(first, []byte("# ")) {
		title = strings.TrimPrefix(strings.TrimPrefix(string(first), "# "), "Current Task: ")
	}
	for attempt := 0; attempt < 3; attempt++ {
		name := path.Join(archiveDir, uid+"_"+slug(title)+".md")
		err := d.writeNew(name, b)
		if err == nil {
			return rel(name), nil
		}
		if old, rerr := d.readFile(name); rerr == nil && bytes.Equal(old, b) {
			return rel(name), nil // archived already (a crash before the task was replaced)
		}
		if !errors.Is(err, fs.ErrExist) {
			return "", err
		}
		uid = newUID() // the name holds another task: never overwrite it
	}
	return "", fsError(rel(archiveDir), errors.New("could not find a free archive name"))
}

// headerValue returns the value of a "- Key: value" line before the first
// "## " section.
func headerValue(b []byte, key string) string {
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "## ") {
			break
		}
		if v, ok := strings.CutPrefix(line, "- "+key+": "); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// slug makes a short, safe, decorative file-name part: lower-case ASCII
// letters and digits joined by '-'.
func slug(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			b.WriteRune(r)
			dash = false
		default:
			dash = true
		}
	}
	out := b.String()
	if len(out) > 48 { // decorative: keep names short, cut at a word
		out = out[:48]
		if i := strings.LastIndexByte(out, '-'); i > 0 {
			out = out[:i]
		}
	}
	if out == "" {
		return "decision"
	}
	return out
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }
