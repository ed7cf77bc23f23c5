package guard

import (
	"fmt"
	"strings"
)

// Step converts the data in a home from one format to the next.
type Step struct {
	From, To Version
	Run      func(home string) error
}

// Migrations are the steps from older formats, in order. Format 1.0 is the
// first, so there are none yet; adding a format means adding one entry.
var Migrations []Step

// MigrateOptions choose what `hearthd migrate` may do.
type MigrateOptions struct {
	// Adopt marks a home that has data but no marker as this build's format:
	// the explicit answer to exit 65 for data written before the guard.
	Adopt bool
}

// Migrate is the explicit step the guard's refusals point to: it runs the
// migration steps from the marker's format to Format, then rewrites the
// marker, all under the guard's lock. It reports what it did.
func Migrate(home, writtenBy string, opts MigrateOptions) (string, error) {
	unlock, err := lock(home)
	if err != nil {
		return "", err
	}
	defer unlock()
	m, err := readMarker(home)
	if err != nil {
		return "", &Error{ExitCode: ExitDataErr, Message: fmt.Sprintf("cannot read the format marker: %v", err)}
	}
	if m == nil {
		data, err := storeEntries(home)
		if err != nil {
			return "", err
		}
		if len(data) > 0 && !opts.Adopt {
			return "", &Error{ExitCode: ExitDataErr, Message: fmt.Sprintf(
				"%s has data (%s) but no marker: nothing says which format it is in. If it was written by a hearthd of format %s, run `hearthd migrate --adopt`.",
				home, strings.Join(data, ", "), Format)}
		}
		if err := writeMarker(home, Format, writtenBy); err != nil {
			return "", err
		}
		if len(data) > 0 {
			return fmt.Sprintf("adopted the data in %s as format %s", home, Format), nil
		}
		return fmt.Sprintf("%s is empty; marked it as format %s", home, Format), nil
	}
	if m.format == Format {
		return fmt.Sprintf("%s is already in format %s; nothing to do", home, Format), nil
	}
	if newer(m.format, Format) {
		return "", &Error{ExitCode: ExitConfig, Message: fmt.Sprintf(
			"the data in %s is in format %s, newer than this hearthd's %s: upgrade hearthd instead", home, m.format, Format)}
	}
	at := m.format
	var done []string
	for at != Format {
		step, ok := stepFrom(at)
		if !ok {
			return "", &Error{ExitCode: ExitConfig, Message: fmt.Sprintf(
				"no migration from format %s to %s is known; the data in %s is unchanged", at, Format, home)}
		}
		if err := step.Run(home); err != nil {
			// The marker still names the last format completed, so a rerun resumes.
			return "", fmt.Errorf("migrating %s from %s to %s: %w", home, step.From, step.To, err)
		}
		if err := writeMarker(home, step.To, writtenBy); err != nil {
			return "", err
		}
		done = append(done, step.From.String()+" -> "+step.To.String())
		at = step.To
	}
	return fmt.Sprintf("migrated %s: %s", home, strings.Join(done, ", ")), nil
}

func stepFrom(v Version) (Step, bool) {
	for _, s := range Migrations {
		if s.From == v {
			return s, true
		}
	}
	return Step{}, false
}
