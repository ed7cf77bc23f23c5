package guard

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func exitCode(err error) int {
	var ge *Error
	if errors.As(err, &ge) {
		return ge.ExitCode
	}
	return 0
}

// snapshot hashes every file under dir (but the guard's own lock file), so
// a test can prove nothing changed.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() == ".format_version.lock" {
			return err
		}
		b, _ := os.ReadFile(p)
		out[p] = fmt.Sprintf("%x", sha256.Sum256(b))
		return nil
	})
	return out
}

func TestREQ_MCP_001_VersionMismatchExits78(t *testing.T) {
	for _, onDisk := range []string{"2.0", "1.1", "0.9"} {
		home := t.TempDir()
		writeFile(t, filepath.Join(home, MarkerName), onDisk+"\n9.9.9+abc\n")
		_, err := Check(home, "0.1.0+dev")
		if exitCode(err) != ExitConfig {
			t.Fatalf("%s: want exit 78, got %v", onDisk, err)
		}
		msg := err.Error()
		for _, want := range []string{"format " + onDisk, "hearthd 9.9.9+abc", "reads format 1.0"} {
			if !strings.Contains(msg, want) {
				t.Errorf("%s: message lacks %q: %s", onDisk, want, msg)
			}
		}
		if older := onDisk == "0.9"; older != strings.Contains(msg, "hearthd migrate") {
			t.Errorf("%s: the migrate step should be named exactly for older data: %s", onDisk, msg)
		}
	}
}

func TestREQ_MCP_002_FreshHomeGetsMarker(t *testing.T) {
	home := filepath.Join(t.TempDir(), "new", "home")
	res, err := Check(home, "0.1.0+abc")
	if err != nil || !res.Created {
		t.Fatalf("%+v %v", res, err)
	}
	b, _ := os.ReadFile(filepath.Join(home, MarkerName))
	if string(b) != "1.0\n0.1.0+abc\n" {
		t.Fatalf("marker %q", b)
	}
	if fi, _ := os.Stat(home); fi.Mode().Perm() != 0o700 {
		t.Fatalf("home mode %v", fi.Mode())
	}
	res, err = Check(home, "0.1.0+abc")
	if err != nil || res.Created || res.WrittenBy != "0.1.0+abc" {
		t.Fatalf("second check: %+v %v", res, err)
	}
}

func TestREQ_MCP_003_DataWithoutMarkerExits65(t *testing.T) {
	home := t.TempDir()
	writeFile(t, filepath.Join(home, "memory.db"), "sqlite")
	before := snapshot(t, home)
	_, err := Check(home, "0.1.0")
	if exitCode(err) != ExitDataErr || !strings.Contains(err.Error(), "memory.db") || !strings.Contains(err.Error(), "hearthd migrate --adopt") {
		t.Fatalf("want exit 65 naming the data and the way out, got %v", err)
	}
	after := snapshot(t, home)
	for p := range after {
		if _, ok := before[p]; !ok && !strings.HasSuffix(p, ".lock") {
			t.Fatalf("the guard wrote %s into a legacy home", p)
		}
	}
}

// REQ-MCP-004 (the guard runs before any store is opened) is proven end to
// end in test/guard_test.go: hearthd refuses a mismatched home and leaves it
// byte-for-byte untouched. Here: a refusal never touches the data.
func TestREQ_MCP_004_RefusalLeavesDataUntouched(t *testing.T) {
	home := t.TempDir()
	writeFile(t, filepath.Join(home, MarkerName), "2.0\n2.0.0\n")
	writeFile(t, filepath.Join(home, "memory.db"), "precious")
	os.MkdirAll(filepath.Join(home, "index"), 0o700)
	writeFile(t, filepath.Join(home, "index", "a.db"), "index")
	before := snapshot(t, home)
	if _, err := Check(home, "0.1.0"); exitCode(err) != ExitConfig {
		t.Fatal(err)
	}
	after := snapshot(t, home)
	for p, h := range before {
		if after[p] != h {
			t.Fatalf("%s changed", p)
		}
	}
}

func TestREQ_MCP_005_ConcurrentCheckersWriteOneMarker(t *testing.T) {
	home := t.TempDir()
	var wg sync.WaitGroup
	created := make(chan bool, 32)
	for i := 0; i < 32; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			res, err := Check(home, fmt.Sprintf("0.1.0+g%d", i))
			if err != nil {
				t.Error(err)
			}
			created <- res.Created
		}(i)
	}
	wg.Wait()
	close(created)
	n := 0
	for c := range created {
		if c {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("%d goroutines wrote the marker", n)
	}
}

// TestREQ_MCP_005_ConcurrentProcesses re-executes this test binary as 8
// processes checking one fresh home at once: one writes the marker, none
// sees a torn one.
func TestREQ_MCP_005_ConcurrentProcesses(t *testing.T) {
	if home := os.Getenv("GUARD_CHILD_HOME"); home != "" {
		res, err := Check(home, "0.1.0+p"+os.Getenv("GUARD_CHILD_N"))
		if err != nil {
			fmt.Println("error:", err)
			os.Exit(3)
		}
		fmt.Println("created:", res.Created)
		os.Exit(0)
	}
	home := t.TempDir()
	var wg sync.WaitGroup
	outs := make([]string, 8)
	for i := range outs {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			cmd := exec.Command(os.Args[0], "-test.run=^TestREQ_MCP_005_ConcurrentProcesses$")
			cmd.Env = append(os.Environ(), "GUARD_CHILD_HOME="+home, fmt.Sprintf("GUARD_CHILD_N=%d", i))
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Errorf("child %d: %v %s", i, err, out)
			}
			outs[i] = string(out)
		}(i)
	}
	wg.Wait()
	if n := strings.Count(strings.Join(outs, ""), "created: true"); n != 1 {
		t.Fatalf("%d processes wrote the marker:\n%s", n, strings.Join(outs, ""))
	}
	b, _ := os.ReadFile(filepath.Join(home, MarkerName))
	if lines := strings.Split(strings.TrimSpace(string(b)), "\n"); len(lines) != 2 || lines[0] != "1.0" {
		t.Fatalf("marker %q", b)
	}
}

func TestREQ_MCP_006_HearthHomeVariable(t *testing.T) {
	cases := []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"HEARTH_HOME": "/data/h", "XDG_DATA_HOME": "/x", "HOME": "/home/u"}, "/data/h"},
		{map[string]string{"XDG_DATA_HOME": "/x", "HOME": "/home/u"}, "/x/hearth"},
		{map[string]string{"XDG_DATA_HOME": "relative", "HOME": "/home/u"}, "/home/u/.local/share/hearth"},
		{map[string]string{"HOME": "/home/u"}, "/home/u/.local/share/hearth"},
	}
	for _, c := range cases {
		got, err := Home(func(k string) string { return c.env[k] })
		if err != nil || got != c.want {
			t.Errorf("%v: got %q %v, want %q", c.env, got, err, c.want)
		}
	}
}

func TestREQ_MCP_007_PatchDifferenceAllowed(t *testing.T) {
	home := t.TempDir()
	writeFile(t, filepath.Join(home, MarkerName), "1.0\n0.1.0+old\n")
	writeFile(t, filepath.Join(home, "memory.db"), "x")
	res, err := Check(home, "0.1.7+new")
	if err != nil || res.WrittenBy != "0.1.0+old" {
		t.Fatalf("a different release of the same format must pass: %+v %v", res, err)
	}
}

func TestREQ_MCP_007_MinorDifferenceBlocked(t *testing.T) {
	home := t.TempDir()
	writeFile(t, filepath.Join(home, MarkerName), "1.1\n0.2.0\n")
	if _, err := Check(home, "0.1.0"); exitCode(err) != ExitConfig {
		t.Fatalf("want 78, got %v", err)
	}
}

func TestREQ_MCP_008_SuccessfulCheckIsReported(t *testing.T) {
	home := t.TempDir()
	res, _ := Check(home, "0.1.0")
	if !strings.Contains(res.String(), "check passed") || !strings.Contains(res.String(), "marker written") {
		t.Fatalf("%q", res.String())
	}
	res, _ = Check(home, "0.1.0")
	if !strings.Contains(res.String(), "check passed") || !strings.Contains(res.String(), "format 1.0") {
		t.Fatalf("%q", res.String())
	}
}

// NEG-MCP-001: there is no way to turn a mismatch into a warning: Check takes
// no such option and reads no variable; whatever the environment says, it refuses.
func TestNEG_MCP_001_NoWarningOnlyMode(t *testing.T) {
	for _, kv := range [][2]string{{"HEARTH_GUARD", "warn"}, {"HEARTH_SKIP_VERSION_CHECK", "1"}, {"HEARTH_FORCE", "1"}} {
		t.Setenv(kv[0], kv[1])
	}
	home := t.TempDir()
	writeFile(t, filepath.Join(home, MarkerName), "3.0\n3.0.0\n")
	if _, err := Check(home, "0.1.0"); exitCode(err) != ExitConfig {
		t.Fatalf("a mismatch passed: %v", err)
	}
}

// NEG-MCP-002: a mismatched home is never migrated by Check; only Migrate
// (the explicit command) changes anything.
func TestNEG_MCP_002_NoAutomaticMigration(t *testing.T) {
	old := Version{0, 9}
	ran := false
	Migrations = []Step{{From: old, To: Format, Run: func(string) error { ran = true; return nil }}}
	t.Cleanup(func() { Migrations = nil })
	home := t.TempDir()
	writeFile(t, filepath.Join(home, MarkerName), "0.9\n0.0.9\n")
	before := snapshot(t, home)
	if _, err := Check(home, "0.1.0"); exitCode(err) != ExitConfig || ran {
		t.Fatalf("Check migrated or passed: %v ran=%v", err, ran)
	}
	if after := snapshot(t, home); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Fatal("Check changed the home")
	}
	msg, err := Migrate(home, "0.1.0", MigrateOptions{})
	if err != nil || !ran || !strings.Contains(msg, "0.9 -> 1.0") {
		t.Fatalf("explicit migrate: %q %v ran=%v", msg, err, ran)
	}
	if _, err := Check(home, "0.1.0"); err != nil {
		t.Fatalf("after migrate: %v", err)
	}
}

func TestMigrateCases(t *testing.T) {
	current := t.TempDir()
	Check(current, "0.1.0")
	if msg, err := Migrate(current, "0.1.0", MigrateOptions{}); err != nil || !strings.Contains(msg, "nothing to do") {
		t.Fatalf("current: %q %v", msg, err)
	}
	unknown := t.TempDir()
	writeFile(t, filepath.Join(unknown, MarkerName), "0.5\n0.0.5\n")
	if _, err := Migrate(unknown, "0.1.0", MigrateOptions{}); exitCode(err) != ExitConfig || !strings.Contains(err.Error(), "no migration from format 0.5") {
		t.Fatalf("unknown: %v", err)
	}
	future := t.TempDir()
	writeFile(t, filepath.Join(future, MarkerName), "7.0\n7.0.0\n")
	if _, err := Migrate(future, "0.1.0", MigrateOptions{}); exitCode(err) != ExitConfig || !strings.Contains(err.Error(), "upgrade hearthd") {
		t.Fatalf("future: %v", err)
	}
	legacy := t.TempDir()
	writeFile(t, filepath.Join(legacy, "memory.db"), "x")
	if _, err := Migrate(legacy, "0.1.0", MigrateOptions{}); exitCode(err) != ExitDataErr {
		t.Fatalf("legacy without --adopt: %v", err)
	}
	if msg, err := Migrate(legacy, "0.1.0", MigrateOptions{Adopt: true}); err != nil || !strings.Contains(msg, "adopted") {
		t.Fatalf("adopt: %q %v", msg, err)
	}
	if _, err := Check(legacy, "0.1.0"); err != nil {
		t.Fatalf("after adopt: %v", err)
	}
}

func TestBadMarkers(t *testing.T) {
	for name, content := range map[string]string{
		"empty":        "",
		"one line":     "1.0\n",
		"garbage":      "hello\nworld\n",
		"three parts":  "1.0.0\nx\n",
		"negative":     "-1.0\nx\n",
		"huge":         strings.Repeat("9", 5000),
		"binary":       "\x00\x01\x02\n\x03\n",
		"blank line 2": "1.0\n   \n",
	} {
		home := t.TempDir()
		writeFile(t, filepath.Join(home, MarkerName), content)
		_, err := Check(home, "0.1.0")
		if exitCode(err) != ExitDataErr || !strings.Contains(err.Error(), "marker") {
			t.Errorf("%s: want a clear exit 65, got %v", name, err)
		}
	}
}

func TestParseVersion(t *testing.T) {
	if v, err := ParseVersion(" 12.3 "); err != nil || v != (Version{12, 3}) {
		t.Fatal(v, err)
	}
	for _, bad := range []string{"", "1", "1.", ".1", "a.b", "1.2.3", "1.-2"} {
		if _, err := ParseVersion(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
