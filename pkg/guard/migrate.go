package guard

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Step converts the data in a home from one format to a newer one.
type Step struct {
	From, To Version
	What     string // a few words on what changes, for the report
	// Run converts home in place. The marker still names From while it
	// runs and is moved to To only after it returns nil, so a Run that fails
	// must leave the data readable as From (or be safe to run again).
	Run func(home string) error
}

// migrations is the registry of steps, oldest first. Format 1.0 is the
// first format, so it is empty. Moving to 1.1 means bumping Format and
// adding one entry:
//
//	{From: Version{1, 0}, To: Version{1, 1}, What: "memory.db gains an embeddings table", Run: addEmbeddings},
var migrations = []Step{}

// MigrateOptions choose what `hearthd migrate` may do.
type MigrateOptions struct {
	// Adopt marks a home whose data has no readable marker (data from before
	// the guard, or a marker lost or damaged) as this build's format. It is
	// the explicit answer to a refusal with exit 65 and does nothing else.
	Adopt bool
}

// MigrateResult says what Migrate did; String is the line to print.
type MigrateResult struct {
	Home    string
	From    Version  // the format found (zero when there was no readable marker)
	To      Version  // the format the home is in now
	Steps   []string // "1.0 -> 1.1: what", in the order run
	Adopted bool     // a marker was written for data that had none
	Nothing string   // why nothing was done, when nothing was
}

func (r MigrateResult) String() string {
	switch {
	case r.Nothing != "":
		return r.Nothing
	case r.Adopted:
		return fmt.Sprintf("adopted the data in %s as format %s", r.Home, r.To)
	case len(r.Steps) == 0:
		return fmt.Sprintf("%s was not migrated", r.Home) // what a refused or failed Migrate returns
	default:
		return fmt.Sprintf("migrated %s from format %s to %s: %s", r.Home, r.From, r.To, strings.Join(r.Steps, "; "))
	}
}

// Migrate is the explicit step the guard's refusals name (`hearthd
// migrate`): under the guard's lock it runs the registered steps from the
// marker's format to Format, moving the marker forward after each step that
// succeeds. A home already current is a no-op that says so. Stop hearthd
// first: the lock keeps two guards apart, not a running daemon from its store.
func Migrate(home, build string, opts MigrateOptions) (MigrateResult, error) {
	return migrate(home, current, build, migrations, opts)
}

func migrate(home string, want Version, build string, steps []Step, opts MigrateOptions) (MigrateResult, error) {
	res := MigrateResult{Home: home, To: want}
	if err := validBuild(build); err != nil {
		return res, err
	}
	if !filepath.IsAbs(home) {
		return res, fmt.Errorf("data directory %q is not an absolute path", home)
	}
	fi, err := os.Stat(home)
	if errors.Is(err, fs.ErrNotExist) {
		res.Nothing = fmt.Sprintf("%s does not exist; nothing to do (hearthd creates it in format %s on first start)", home, want)
		return res, nil
	}
	if err != nil {
		return res, fmt.Errorf("migrate: %w", err)
	}
	if !fi.IsDir() {
		return res, fmt.Errorf("migrate: %s is not a directory", home)
	}
	unlock, err := lock(home)
	if err != nil {
		return res, err
	}
	defer unlock()

	m, err := readMarker(home)
	var bad *badMarker
	switch {
	case errors.As(err, &bad):
		if !opts.Adopt {
			return res, &Error{ExitCode: ExitDataErr, Reason: ReasonBadMarker, Home: home, Want: want.String(), Err: err, Message: fmt.Sprintf(
				"%v, so nothing says which format the data is in; nothing was changed. Restore the marker from a backup, or, if the data is in format %s, run `hearthd migrate --adopt`.",
				err, want)}
		}
		return adopt(res, build)
	case err != nil:
		return res, err
	case m == nil:
		data, err := dataEntries(home)
		if err != nil {
			return res, err
		}
		if len(data) == 0 {
			res.Nothing = fmt.Sprintf("%s holds no data; nothing to do (hearthd marks it as format %s on first start)", home, want)
			return res, nil
		}
		if !opts.Adopt {
			return res, &Error{ExitCode: ExitDataErr, Reason: ReasonNoMarker, Home: home, Want: want.String(), Message: fmt.Sprintf(
				"%s holds data (%s) but no %s marker, so nothing says which format it is in; nothing was changed. If it was written by a hearthd of format %s, back it up and run `hearthd migrate --adopt`.",
				home, list(data), MarkerName, want)}
		}
		return adopt(res, build)
	}

	res.From = m.format
	if m.format == want {
		res.Nothing = fmt.Sprintf("%s is already in format %s; nothing to do", home, want)
		return res, nil
	}
	if m.format.newer(want) {
		return res, &Error{ExitCode: ExitConfig, Reason: ReasonFormatMismatch, Home: home, Found: m.format.String(), Want: want.String(), Message: fmt.Sprintf(
			"the data in %s is in format %s (written by hearthd %s), newer than format %s of this hearthd %s; nothing was changed. Upgrade hearthd instead: data is never converted backwards.",
			home, m.format, m.writtenBy, want, build)}
	}
	todo, err := plan(steps, m.format, want)
	if err != nil {
		return res, &Error{ExitCode: ExitConfig, Reason: ReasonFormatMismatch, Home: home, Found: m.format.String(), Want: want.String(), Err: err, Message: fmt.Sprintf(
			"hearthd %s cannot migrate format %s to %s: %v; the data in %s is unchanged. Restore a backup made for format %s, or move the directory aside to start afresh.",
			build, m.format, want, err, home, want)}
	}
	for _, s := range todo {
		if err := s.Run(home); err != nil {
			res.To = s.From
			return res, fmt.Errorf("migrate %s from format %s to %s: %w (the marker still says %s; fix the cause and run `hearthd migrate` again)",
				home, s.From, s.To, err, s.From)
		}
		if err := writeMarker(home, s.To, build); err != nil {
			res.To = s.From
			return res, fmt.Errorf("migrate %s: step %s -> %s ran but the marker could not be moved forward: %w", home, s.From, s.To, err)
		}
		res.Steps = append(res.Steps, fmt.Sprintf("%s -> %s: %s", s.From, s.To, s.What))
	}
	return res, nil
}

func adopt(res MigrateResult, build string) (MigrateResult, error) {
	if err := writeMarker(res.Home, res.To, build); err != nil {
		return res, err
	}
	res.Adopted = true
	return res, nil
}

// plan chains the steps from one format to another. Every step must move
// strictly forward and not past to, so the walk always ends.
func plan(steps []Step, from, to Version) ([]Step, error) {
	var out []Step
	for at := from; at != to; {
		s, ok := stepFrom(steps, at)
		if !ok {
			return nil, fmt.Errorf("no migration step from format %s is known", at)
		}
		if !s.To.newer(s.From) || s.To.newer(to) || s.Run == nil {
			return nil, fmt.Errorf("the migration step %s -> %s is malformed", s.From, s.To)
		}
		out = append(out, s)
		at = s.To
	}
	return out, nil
}

func stepFrom(steps []Step, v Version) (Step, bool) {
	for _, s := range steps {
		if s.From == v {
			return s, true
		}
	}
	return Step{}, false
}
