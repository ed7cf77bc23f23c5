package guard

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestMigrate(t *testing.T) {
	cases := []struct {
		name      string
		make      func(t *testing.T, home string)
		opts      MigrateOptions
		exit      int    // 0: success; else the refusal's exit code
		says      string // in the result's String or the refusal's message
		unchanged bool   // the home is byte-for-byte as before
		checkOK   bool   // Check passes afterwards
	}{
		{name: "already current", make: withMarker(Format + "\n0.0.1\n"), says: "already in format " + Format + "; nothing to do", unchanged: true, checkOK: true},
		{name: "already current, adopt", make: withMarker(Format + "\n0.0.1\n"), opts: MigrateOptions{Adopt: true}, says: "nothing to do", unchanged: true, checkOK: true},
		{name: "empty home", make: func(*testing.T, string) {}, says: "holds no data; nothing to do", unchanged: true, checkOK: true},
		{name: "legacy data", make: data, exit: ExitDataErr, says: "run `hearthd migrate --adopt`", unchanged: true},
		{name: "legacy data, adopt", make: data, opts: MigrateOptions{Adopt: true}, says: "adopted the data", checkOK: true},
		{name: "corrupt marker", make: both("x\n"), exit: ExitDataErr, says: "hearthd migrate --adopt", unchanged: true},
		{name: "corrupt marker, adopt", make: both("x\n"), opts: MigrateOptions{Adopt: true}, says: "adopted the data", checkOK: true},
		{name: "newer format", make: both("7.0\n7.0.0\n"), exit: ExitConfig, says: "Upgrade hearthd", unchanged: true},
		{name: "newer format, adopt", make: both("7.0\n7.0.0\n"), opts: MigrateOptions{Adopt: true}, exit: ExitConfig, says: "Upgrade hearthd", unchanged: true},
		{name: "unknown older format", make: both("0.5\n0.0.5\n"), exit: ExitConfig, says: "cannot migrate format 0.5 to " + Format + ": no migration step from format 0.5", unchanged: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			home := t.TempDir()
			c.make(t, home)
			before := treeHash(t, home)
			res, err := Migrate(home, build, c.opts)
			said := res.String()
			if c.exit != 0 {
				ge := refusal(t, err)
				if ge.ExitCode != c.exit {
					t.Fatalf("exit %d, want %d: %s", ge.ExitCode, c.exit, ge.Message)
				}
				if !strings.Contains(res.String(), "was not migrated") {
					t.Errorf("a refused Migrate reports %q", res.String())
				}
				said = ge.Message
			} else if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(said, c.says) {
				t.Errorf("%q lacks %q", said, c.says)
			}
			if c.unchanged && treeHash(t, home) != before {
				t.Error("the home changed")
			}
			if _, err := Check(home, build); (err == nil) != c.checkOK {
				t.Errorf("Check afterwards: %v", err)
			}
		})
	}
}

func withMarker(content string) func(*testing.T, string) {
	return func(t *testing.T, home string) { writeFile(t, filepath.Join(home, MarkerName), content) }
}

func data(t *testing.T, home string) { writeFile(t, filepath.Join(home, "memory.db"), "data") }

func both(content string) func(*testing.T, string) {
	return func(t *testing.T, home string) { withMarker(content)(t, home); data(t, home) }
}

func TestMigrateMissingHomeIsNotCreated(t *testing.T) {
	home := filepath.Join(t.TempDir(), "none")
	res, err := Migrate(home, build, MigrateOptions{})
	if err != nil || !strings.Contains(res.String(), "does not exist; nothing to do") {
		t.Fatalf("%v %v", res, err)
	}
	if _, err := os.Stat(home); err == nil {
		t.Fatal("migrate created the home")
	}
}

// Steps run oldest first; while each runs the marker still names its From,
// and it names To only once the step returned.
func TestMigrateRunsStepsInOrderThenMovesMarker(t *testing.T) {
	home := t.TempDir()
	writeFile(t, filepath.Join(home, MarkerName), "0.8\n0.0.8\n")
	var ran []string
	step := func(from, to Version) Step {
		return Step{From: from, To: to, What: "step " + from.String(), Run: func(h string) error {
			m, err := readMarker(h)
			if err != nil || m.format != from {
				t.Errorf("step %s ran with the marker at %v %v", from, m, err)
			}
			ran = append(ran, from.String())
			return nil
		}}
	}
	// Registered out of order on purpose: the chain, not the slice order, decides.
	steps := []Step{step(Version{0, 9}, current), step(Version{0, 8}, Version{0, 9})}
	res, err := migrate(home, current, "0.2.0", steps, MigrateOptions{})
	if err != nil || strings.Join(ran, ",") != "0.8,0.9" || res.From != (Version{0, 8}) || res.To != current {
		t.Fatalf("%+v %v ran=%v", res, err, ran)
	}
	want := "migrated " + home + " from format 0.8 to " + Format + ": 0.8 -> 0.9: step 0.8; 0.9 -> " + Format + ": step 0.9"
	if res.String() != want {
		t.Errorf("%q\nwant %q", res.String(), want)
	}
	if got := readFile(t, filepath.Join(home, MarkerName)); got != Format+"\n0.2.0\n" {
		t.Errorf("marker %q", got)
	}
}

func TestMigrateFailedStepKeepsMarker(t *testing.T) {
	home := t.TempDir()
	writeFile(t, filepath.Join(home, MarkerName), "0.8\n0.0.8\n")
	boom := errors.New("disk full")
	steps := []Step{
		{From: Version{0, 8}, To: Version{0, 9}, What: "a", Run: func(string) error { return nil }},
		{From: Version{0, 9}, To: current, What: "b", Run: func(string) error { return boom }},
	}
	res, err := migrate(home, current, build, steps, MigrateOptions{})
	var ge *Error
	if !errors.Is(err, boom) || errors.As(err, &ge) || !strings.Contains(err.Error(), "the marker still says 0.9") ||
		!strings.Contains(err.Error(), "run `hearthd migrate` again") || res.To != (Version{0, 9}) {
		t.Fatalf("%+v %v", res, err)
	}
	if got := readFile(t, filepath.Join(home, MarkerName)); got != "0.9\n"+build+"\n" {
		t.Fatalf("marker %q, want it at the last completed step", got)
	}
}

// A broken chain is found before any step runs, so the data is not left
// half-way between two formats.
func TestMigrateChecksWholePathFirst(t *testing.T) {
	home := t.TempDir()
	writeFile(t, filepath.Join(home, MarkerName), "0.8\n0.0.8\n")
	ran := false
	steps := []Step{{From: Version{0, 8}, To: Version{0, 9}, What: "a", Run: func(string) error { ran = true; return nil }}}
	_, err := migrate(home, current, build, steps, MigrateOptions{})
	if ge := refusal(t, err); ge.ExitCode != ExitConfig || !strings.Contains(ge.Message, "no migration step from format 0.9") || ran {
		t.Fatalf("%+v ran=%v", ge, ran)
	}
}

func TestPlanRejectsMalformedSteps(t *testing.T) {
	noop := func(string) error { return nil }
	cases := map[string][]Step{
		"backwards": {{From: Version{0, 9}, To: Version{0, 8}, Run: noop}},
		"in place":  {{From: Version{0, 9}, To: Version{0, 9}, Run: noop}},
		"overshoot": {{From: Version{0, 9}, To: Version{current.Major + 1, 0}, Run: noop}},
		"no Run":    {{From: Version{0, 9}, To: current}},
	}
	for name, steps := range cases {
		if _, err := plan(steps, Version{0, 9}, current); err == nil || !strings.Contains(err.Error(), "malformed") {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// The real registry: every step moves forward, no format has two steps, and
// from every format named in it there is a whole path to Format.
func TestMigrationRegistryIsWellFormed(t *testing.T) {
	seen := map[Version]bool{}
	for _, s := range migrations {
		if seen[s.From] {
			t.Errorf("two steps from format %s", s.From)
		}
		seen[s.From] = true
		if s.What == "" {
			t.Errorf("step %s -> %s does not say what it does", s.From, s.To)
		}
		if _, err := plan(migrations, s.From, current); err != nil {
			t.Errorf("from %s: %v", s.From, err)
		}
	}
	if steps, err := plan(migrations, current, current); err != nil || len(steps) != 0 {
		t.Errorf("the current format needs no step: %v %v", steps, err)
	}
}
