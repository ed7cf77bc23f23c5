// Package guard is hearth's data-format version guard (seed 000, as DESIGN.md
// §6 adapts it): before any store is opened, hearthd checks the marker
// $HEARTH_HOME/.format_version under a file lock and refuses to run against
// data in a format it does not read.
//
//   - fresh home: the marker is written (line 1 MAJOR.MINOR of the on-disk
//     format, line 2 the full hearthd version that wrote it);
//   - same MAJOR.MINOR: go on (a different hearthd patch release is fine);
//   - different MAJOR.MINOR: exit 78 (EX_CONFIG) naming both versions and the
//     explicit `hearthd migrate` step;
//   - data present but no marker: exit 65 (EX_DATAERR).
//
// There is no warning-only mode and no automatic migration: a mismatch always
// stops the daemon, and only `hearthd migrate` changes the data.
package guard

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/hearth-mcp/hearth/pkg/atomicfile"
)

// Version is an on-disk format version, MAJOR.MINOR.
type Version struct{ Major, Minor int }

func (v Version) String() string { return fmt.Sprintf("%d.%d", v.Major, v.Minor) }

// ParseVersion reads "MAJOR.MINOR" (two non-negative integers).
func ParseVersion(s string) (Version, error) {
	major, minor, ok := strings.Cut(strings.TrimSpace(s), ".")
	a, err1 := strconv.Atoi(major)
	b, err2 := strconv.Atoi(minor)
	if !ok || err1 != nil || err2 != nil || a < 0 || b < 0 {
		return Version{}, fmt.Errorf("%q is not MAJOR.MINOR", s)
	}
	return Version{a, b}, nil
}

// Format is the on-disk format this build reads and writes. Bump Minor for a
// change older builds must not touch, Major for a rewrite; either way add a
// step to Migrations.
var Format = Version{1, 0}

// MarkerName is the marker file in the home directory.
const MarkerName = ".format_version"

// maxMarker bounds what is read of a marker: it is two short lines.
const maxMarker = 4096

// Exit codes (sysexits.h) the daemon exits with when the guard refuses.
const (
	ExitDataErr = 65 // EX_DATAERR: data present but no readable marker
	ExitConfig  = 78 // EX_CONFIG: the data is in another format
)

// Error is a refusal to run. The daemon prints Message and exits ExitCode.
type Error struct {
	ExitCode int
	Message  string
}

func (e *Error) Error() string { return e.Message }

// Result is what a passed check found, for the log (REQ-MCP-008).
type Result struct {
	Home      string
	Format    Version // the format on disk, equal to this build's
	WrittenBy string  // the hearthd version that wrote the marker
	Created   bool    // the home was fresh and the marker was written now
}

func (r Result) String() string {
	if r.Created {
		return fmt.Sprintf("format_version check passed: fresh home %s, marker written (format %s)", r.Home, r.Format)
	}
	return fmt.Sprintf("format_version check passed: home %s has format %s (written by hearthd %s)", r.Home, r.Format, r.WrittenBy)
}

// Home is the data directory: $HEARTH_HOME, else $XDG_DATA_HOME/hearth, else
// ~/.local/share/hearth (REQ-MCP-006, with HEARTH_HOME for PIXELTABLE_HOME).
func Home(getenv func(string) string) (string, error) {
	if v := getenv("HEARTH_HOME"); v != "" {
		return filepath.Abs(v)
	}
	if v := getenv("XDG_DATA_HOME"); v != "" && filepath.IsAbs(v) {
		return filepath.Join(v, "hearth"), nil
	}
	home := getenv("HOME")
	if home == "" {
		h, err := os.UserHomeDir()
		if err != nil {
			return "", errors.New("cannot find the data directory: set HEARTH_HOME")
		}
		home = h
	}
	return filepath.Join(home, ".local", "share", "hearth"), nil
}

type marker struct {
	format    Version
	writtenBy string
}

// readMarker returns the marker, or (nil, nil) when there is none.
func readMarker(home string) (*marker, error) {
	path := filepath.Join(home, MarkerName)
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	defer f.Close()
	b := make([]byte, maxMarker+1)
	n, err := f.Read(b)
	if err != nil && n == 0 {
		return nil, fmt.Errorf("%s is empty", path)
	}
	if n > maxMarker {
		return nil, fmt.Errorf("%s is over %d bytes; it is not a hearth marker", path, maxMarker)
	}
	sc := bufio.NewScanner(bytes.NewReader(b[:n]))
	var lines []string
	for sc.Scan() {
		lines = append(lines, strings.TrimSpace(sc.Text()))
	}
	if len(lines) < 2 || lines[1] == "" {
		return nil, fmt.Errorf("%s does not have its two lines (MAJOR.MINOR, then the hearthd version)", path)
	}
	v, err := ParseVersion(lines[0])
	if err != nil {
		return nil, fmt.Errorf("%s line 1: %w", path, err)
	}
	return &marker{format: v, writtenBy: lines[1]}, nil
}

// writeMarker writes the marker atomically: readers see no marker or a whole one.
func writeMarker(home string, v Version, writtenBy string) error {
	return atomicfile.Write(filepath.Join(home, MarkerName), []byte(fmt.Sprintf("%s\n%s\n", v, writtenBy)), 0o600)
}

// storeEntries lists what in home is hearth data: every entry whose name does
// not start with "." (the marker, its lock and temporary files are hidden).
func storeEntries(home string) ([]string, error) {
	entries, err := os.ReadDir(home)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", home, err)
	}
	var names []string
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), ".") {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	return names, nil
}

// Check runs the guard on home for a hearthd whose full version is
// writtenBy. It must run before any store in home is opened (REQ-MCP-004).
// A refusal is an *Error carrying the exit code.
func Check(home, writtenBy string) (Result, error) {
	if err := os.MkdirAll(home, 0o700); err != nil {
		return Result{}, fmt.Errorf("create data directory %s: %w", home, err)
	}
	unlock, err := lock(home)
	if err != nil {
		return Result{}, err
	}
	defer unlock()

	m, err := readMarker(home)
	if err != nil {
		return Result{}, &Error{ExitCode: ExitDataErr, Message: fmt.Sprintf(
			"hearth cannot read the format marker of its data: %v. Restore the file, or move %s aside to start afresh.", err, home)}
	}
	if m == nil {
		data, err := storeEntries(home)
		if err != nil {
			return Result{}, err
		}
		if len(data) > 0 {
			return Result{}, &Error{ExitCode: ExitDataErr, Message: fmt.Sprintf(
				"%s holds hearth data (%s) but no %s marker, so hearthd cannot tell which format it is in. "+
					"If it was written by a hearthd of format %s, adopt it with `hearthd migrate --adopt`; otherwise move it aside.",
				home, strings.Join(data, ", "), MarkerName, Format)}
		}
		if err := writeMarker(home, Format, writtenBy); err != nil {
			return Result{}, err
		}
		return Result{Home: home, Format: Format, WrittenBy: writtenBy, Created: true}, nil
	}
	if m.format != Format {
		return Result{}, mismatch(home, m)
	}
	return Result{Home: home, Format: m.format, WrittenBy: m.writtenBy}, nil
}

func mismatch(home string, m *marker) *Error {
	what := fmt.Sprintf("the data in %s is in format %s (written by hearthd %s), but this hearthd reads format %s.",
		home, m.format, m.writtenBy, Format)
	var todo string
	if newer(m.format, Format) {
		todo = "It was written by a newer hearthd: upgrade hearthd, or restore a backup made for this version."
	} else {
		todo = "Back it up, then run `hearthd migrate` to convert it explicitly; hearthd never migrates on its own."
	}
	return &Error{ExitCode: ExitConfig, Message: "hearthd will not start: " + what + " " + todo}
}

func newer(a, b Version) bool { return a.Major > b.Major || (a.Major == b.Major && a.Minor > b.Minor) }
