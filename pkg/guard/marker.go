package guard

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/hearth-mcp/hearth/pkg/atomicfile"
	"github.com/hearth-mcp/hearth/pkg/safefile"
)

// Version is an on-disk format version, MAJOR.MINOR. Only the format is
// compared; hearthd's own release version is recorded beside it for people.
type Version struct{ Major, Minor int }

func (v Version) String() string { return fmt.Sprintf("%d.%d", v.Major, v.Minor) }

func (v Version) newer(than Version) bool {
	return v.Major > than.Major || (v.Major == than.Major && v.Minor > than.Minor)
}

// ParseVersion reads "MAJOR.MINOR": two runs of at most 9 ASCII digits (no
// sign, no third part; surrounding spaces are ignored).
func ParseVersion(s string) (Version, error) {
	major, minor, ok := strings.Cut(strings.TrimSpace(s), ".")
	a, okA := number(major)
	b, okB := number(minor)
	if !ok || !okA || !okB {
		return Version{}, fmt.Errorf("%q is not MAJOR.MINOR", s)
	}
	return Version{a, b}, nil
}

func mustParse(s string) Version {
	v, err := ParseVersion(s)
	if err != nil {
		panic("guard: " + err.Error())
	}
	return v
}

// number accepts only digits: strconv.Atoi alone would take "+1" and "-0".
func number(s string) (int, bool) {
	if s == "" || len(s) > 9 {
		return 0, false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	n, err := strconv.Atoi(s)
	return n, err == nil
}

// maxMarker bounds a marker: two short lines. A bigger file is not ours.
const maxMarker = 512

// maxBuild bounds line 2, which is echoed into messages and logs.
const maxBuild = 200

type marker struct {
	format    Version
	writtenBy string
}

// badMarker says a marker file exists but is not a hearth marker.
type badMarker struct{ path, why string }

func (e *badMarker) Error() string { return fmt.Sprintf("the format marker %s %s", e.path, e.why) }

// readMarker returns the marker, (nil, nil) when there is none, a
// *badMarker when the file is not a well-formed marker, or an I/O error.
// Writers replace the marker by rename, so a reader sees a whole one.
func readMarker(home string) (*marker, error) {
	path := filepath.Join(home, MarkerName)
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read format marker: %w", err)
	}
	// Not following a symlink and not opening a FIFO (which would block).
	if !fi.Mode().IsRegular() {
		return nil, &badMarker{path, fmt.Sprintf("is not a regular file (%s)", fi.Mode().Type())}
	}
	if fi.Size() > maxMarker {
		return nil, &badMarker{path, fmt.Sprintf("is %d bytes; a marker is two short lines", fi.Size())}
	}
	// A file of hearth's own: opened without following a link or waiting
	// on a FIFO, and refused when another user owns it or may change it.
	f, err := safefile.OpenOwn(path)
	var notOwn *safefile.NotOwnError
	var notRegular *safefile.NotRegularError
	switch {
	case errors.As(err, &notOwn):
		return nil, &badMarker{path, notOwn.Why}
	case errors.As(err, &notRegular):
		return nil, &badMarker{path, fmt.Sprintf("is not a regular file (a %s)", notRegular.Kind)}
	case err != nil:
		return nil, fmt.Errorf("read format marker: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxMarker+1))
	if err != nil {
		return nil, fmt.Errorf("read format marker %s: %w", path, err)
	}
	if len(b) > maxMarker { // it grew since Lstat
		return nil, &badMarker{path, fmt.Sprintf("is over %d bytes; a marker is two short lines", maxMarker)}
	}
	m, why := parseMarker(b)
	if why != "" {
		return nil, &badMarker{path, why}
	}
	return m, nil
}

// parseMarker reads "MAJOR.MINOR\n<hearthd version>\n". CRLF line ends and a
// missing final newline are tolerated (a hand edit); anything else is not.
func parseMarker(b []byte) (*marker, string) {
	if len(strings.TrimSpace(string(b))) == 0 {
		return nil, "is empty"
	}
	if !utf8.Valid(b) {
		return nil, "is not UTF-8 text"
	}
	text := strings.ReplaceAll(string(b), "\r\n", "\n")
	text = strings.TrimSuffix(text, "\n")
	lines := strings.Split(text, "\n")
	if len(lines) != 2 {
		return nil, fmt.Sprintf("has %d line(s), want 2 (MAJOR.MINOR, then the hearthd version)", len(lines))
	}
	v, err := ParseVersion(lines[0])
	if err != nil {
		return nil, fmt.Sprintf("line 1: %v", err)
	}
	build := strings.TrimSpace(lines[1])
	if err := validBuild(build); err != nil {
		return nil, fmt.Sprintf("line 2: %v", err)
	}
	return &marker{format: v, writtenBy: build}, ""
}

// validBuild accepts a hearthd version for line 2: one printable line.
func validBuild(build string) error {
	if build == "" {
		return errors.New("the hearthd version is empty")
	}
	if len(build) > maxBuild {
		return fmt.Errorf("the hearthd version is over %d bytes", maxBuild)
	}
	for _, c := range build {
		if !unicode.IsPrint(c) {
			return fmt.Errorf("the hearthd version %q has a control character", build)
		}
	}
	return nil
}

// writeMarker replaces the marker atomically (temporary file, fsync,
// rename), and atomicfile.Write then syncs the directory so the rename
// itself survives a crash: a lost marker beside a store written after it
// would read as "data without a marker" on the next start.
func writeMarker(home string, v Version, build string) error {
	path := filepath.Join(home, MarkerName)
	if err := atomicfile.Write(path, []byte(v.String()+"\n"+build+"\n"), 0o600); err != nil {
		return fmt.Errorf("write format marker: %w", err)
	}
	return nil
}

// dataEntries lists the entries of home that are data: every name not
// starting with "." (see the package comment), in name order.
func dataEntries(home string) ([]string, error) {
	entries, err := os.ReadDir(home)
	if err != nil {
		return nil, fmt.Errorf("list data directory: %w", err)
	}
	var names []string
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), ".") {
			names = append(names, e.Name())
		}
	}
	return names, nil
}
