// Package guard is hearth's data-format version guard (docs/architecture.md).
// Before any store is opened, hearthd calls Check, which reads the marker
// $HEARTH_HOME/.format_version under a file lock:
//
//   - fresh home (no marker, no data): the marker is written atomically;
//     line 1 is the on-disk format MAJOR.MINOR, line 2 the full version of
//     the hearthd that wrote it;
//   - same MAJOR.MINOR: go on. A different hearthd release of the same format
//     (a "patch" difference) is fine, and Check returns a Result to log;
//   - another MAJOR.MINOR: a refusal with exit code 78 (EX_CONFIG) naming both
//     versions and the explicit `hearthd migrate` step;
//   - data present but no marker, or a marker that cannot be read: a refusal
//     with exit code 65 (EX_DATAERR).
//
// "Data present" means any entry in the home whose name does not start with
// a dot (memory.db, its -wal/-shm files, index/, or anything a user put
// there). Dot entries are the guard's own (the marker, its temporary files,
// the Windows lock file) or desktop litter such as .DS_Store; hearth keeps no
// data under a dot name, so it must never add one.
//
// There is no warning-only mode and no automatic migration: nothing in the
// environment weakens a refusal, a refusal leaves the home exactly as it was,
// and only Migrate (`hearthd migrate`) changes data.
package guard

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/hearth-mcp/hearth/pkg/endpoint"
)

// Format is the on-disk format this build reads and writes, MAJOR.MINOR.
// Bump Minor for a change an older hearthd must not open, Major for a
// rewrite; either way add the step that converts the previous format to
// migrations (migrate.go).
const Format = "1.0"

// current is Format parsed; a malformed Format fails every test at init.
var current = mustParse(Format)

// MarkerName is the marker file inside the home directory.
const MarkerName = ".format_version"

// lockName is the lock file, used only where the directory itself cannot be
// locked (Windows, NFS).
const lockName = ".format_version.lock"

// Exit codes (sysexits.h) carried by a refusal. systemd's
// RestartPreventExitStatus=65 78 keeps a refused daemon from restarting in a loop.
const (
	ExitDataErr = 65 // EX_DATAERR: data present without a readable marker
	ExitConfig  = 78 // EX_CONFIG: the data is in a format this hearthd does not read
)

// Reasons a refusal gives, for structured logs.
const (
	ReasonFormatMismatch = "format_mismatch" // marker names another MAJOR.MINOR
	ReasonNoMarker       = "no_marker"       // data present, no marker
	ReasonBadMarker      = "bad_marker"      // marker empty, malformed, huge, not a file
)

// Error is a refusal to run: the daemon prints Message to stderr and exits
// with ExitCode. Get it with errors.As.
type Error struct {
	ExitCode int    // ExitConfig or ExitDataErr
	Reason   string // one of the Reason constants
	Home     string // the data directory checked
	Found    string // the format on disk ("" when there is no readable marker)
	Want     string // the format this hearthd reads
	Message  string // what happened and what the user can do, one paragraph
	Err      error  // the underlying cause, if any
}

func (e *Error) Error() string { return e.Message }
func (e *Error) Unwrap() error { return e.Err }

// Result is what a passed check found; the daemon logs it, so every start
// records which format it found and which hearthd wrote it.
type Result struct {
	Home      string
	Format    Version // the format on disk, equal to this build's
	WrittenBy string  // the hearthd version that wrote the marker
	Build     string  // the hearthd version that ran this check
	Created   bool    // the home was fresh and this check wrote the marker
}

func (r Result) String() string {
	if r.Created {
		return fmt.Sprintf("format_version check passed: fresh home %s, marker written (format %s, hearthd %s)", r.Home, r.Format, r.Build)
	}
	return fmt.Sprintf("format_version check passed: home %s has format %s (written by hearthd %s, running hearthd %s)",
		r.Home, r.Format, r.WrittenBy, r.Build)
}

// Home is the data directory: $HEARTH_HOME, else
// ~/.local/share/hearth (see endpoint.Home, which the shim shares).
func Home(getenv func(string) string) (string, error) { return endpoint.Home(getenv) }

// Check runs the guard on home for the hearthd whose full version is build
// (e.g. version.Tooling()). Call it before anything opens a store in home,
// so that a refused home is left exactly as it was. A refusal is an *Error
// carrying the exit code; any other error (home not creatable, I/O) means
// the check could not run at all.
func Check(home, build string) (Result, error) {
	return check(home, current, build, migrations)
}

func check(home string, want Version, build string, steps []Step) (Result, error) {
	if err := validBuild(build); err != nil {
		return Result{}, err
	}
	if !filepath.IsAbs(home) {
		return Result{}, fmt.Errorf("data directory %q is not an absolute path", home)
	}
	// Creating the directory is the only change made before the lock; it
	// happens only when there is no home at all, so a refused home (which
	// exists) is untouched.
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
		return Result{}, refuseBadMarker(home, want, err)
	}
	if m == nil {
		data, err := dataEntries(home)
		if err != nil {
			return Result{}, err
		}
		if len(data) > 0 {
			return Result{}, refuseNoMarker(home, want, data)
		}
		if err := writeMarker(home, want, build); err != nil {
			return Result{}, err
		}
		return Result{Home: home, Format: want, WrittenBy: build, Build: build, Created: true}, nil
	}
	if m.format != want {
		return Result{}, refuseMismatch(home, m, want, build, steps)
	}
	return Result{Home: home, Format: m.format, WrittenBy: m.writtenBy, Build: build}, nil
}

func refuseMismatch(home string, m *marker, want Version, build string, steps []Step) *Error {
	what := fmt.Sprintf("hearthd %s will not start: the data in %s is in format %s (written by hearthd %s), but this hearthd reads format %s. Nothing was changed.",
		build, home, m.format, m.writtenBy, want)
	var todo string
	switch _, err := plan(steps, m.format, want); {
	case m.format.newer(want):
		todo = fmt.Sprintf("The data is newer than this hearthd: upgrade hearthd to a release that reads format %s, or restore a backup made for format %s (`hearthd migrate` only converts older data forward).",
			m.format, want)
	case err != nil:
		todo = fmt.Sprintf("`hearthd migrate` cannot convert it (%v): restore a backup made for format %s, or move %s aside to start afresh.",
			err, want, home)
	default:
		todo = "Back it up, then run `hearthd migrate` to convert it explicitly; hearthd never converts data on its own."
	}
	return &Error{ExitCode: ExitConfig, Reason: ReasonFormatMismatch, Home: home, Found: m.format.String(), Want: want.String(),
		Message: what + " " + todo}
}

func refuseNoMarker(home string, want Version, data []string) *Error {
	return &Error{ExitCode: ExitDataErr, Reason: ReasonNoMarker, Home: home, Want: want.String(), Message: fmt.Sprintf(
		"hearthd will not start: %s holds data (%s) but no %s marker, so hearthd cannot tell which format it is in. Nothing was changed. "+
			"If that data was written by a hearthd of format %s, back it up and mark it with `hearthd migrate --adopt`; otherwise move it aside or set HEARTH_HOME to another directory.",
		home, list(data), MarkerName, want)}
}

func refuseBadMarker(home string, want Version, err error) error {
	var bad *badMarker
	if !errors.As(err, &bad) {
		return err // I/O: the check could not run, which says nothing about the data
	}
	return &Error{ExitCode: ExitDataErr, Reason: ReasonBadMarker, Home: home, Want: want.String(), Err: err, Message: fmt.Sprintf(
		"hearthd will not start: %v. Nothing was changed. Restore the marker from a backup; if the data in %s is known to be in format %s, "+
			"rewrite the marker with `hearthd migrate --adopt`.", err, home, want)}
}

// list names at most a few entries, so a home with thousands of files still
// gets a one-line message.
func list(names []string) string {
	const max = 5
	if len(names) <= max {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:max], ", "), len(names)-max)
}
