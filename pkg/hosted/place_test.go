package hosted

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The rule that tells a relative-path argument, input class by input class
// (docs/architecture.md, "Hosted servers").
func TestRelativeArg(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "server.py"), nil, 0o600)
	os.Mkdir(filepath.Join(dir, "data"), 0o700)
	for _, tc := range []struct {
		arg  string
		want bool
	}{
		{"server.py", true},          // exists in the client's directory
		{"data", true},               // a directory that exists there
		{"data/missing.json", false}, // not there, and not written as relative
		{"./anything", true},         // written as relative
		{"../up", true},
		{".", true},
		{"..", true},
		{"--root=./src", true}, // an option's value
		{"-config=server.py", true},
		{"--root=/abs", false},
		{"--verbose", false}, // an option without a value
		{"-y", false},
		{"/usr/lib/server.js", false},
		{"~/server.py", false}, // the home directory's, not the client's
		{"@scope/pkg", false},  // an npm package name
		{"", false},
		{"stdio", false},
	} {
		if got := RelativeArg(tc.arg, dir); got != tc.want {
			t.Errorf("RelativeArg(%q) = %v, want %v", tc.arg, got, tc.want)
		}
	}
	if RelativeArg("server.py", "") {
		t.Error("a client without a directory has no relative file")
	}
}

// Global sharing without a cwd refuses what would mean another thing in
// the home directory, and says why; a cwd, or another sharing, runs it.
func TestCheckPlace(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "server.py"), nil, 0o600)
	python := Spec{Command: "/usr/bin/python3", Args: []string{"server.py"}, Sharing: Global}
	err := python.CheckPlace(dir)
	if err == nil {
		t.Fatal("a relative argument under global sharing was accepted")
	}
	for _, want := range []string{"global sharing runs python3 server.py in ", `its argument "server.py" is relative to your directory ` + dir, "use an absolute path, or share by directory"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%v: want %q in it", err, want)
		}
	}
	bare := Spec{Command: "server.py", Sharing: Global}
	if err := bare.CheckPlace(dir); err == nil || !strings.Contains(err.Error(), `its command "server.py" is neither an absolute path nor found on PATH`) {
		t.Errorf("a bare command not on PATH: %v", err)
	}
	abs := python
	abs.Args = []string{filepath.Join(dir, "server.py")}
	withCwd := python
	withCwd.Dir = dir
	byDir := python
	byDir.Sharing = Directory
	perClient := python
	perClient.Sharing = PerClient
	for name, s := range map[string]Spec{"an absolute argument": abs, "a cwd": withCwd, "directory sharing": byDir, "client sharing": perClient} {
		if err := s.CheckPlace(dir); err != nil {
			t.Errorf("%s refused: %v", name, err)
		}
	}
	// Where each runs.
	home, _ := os.UserHomeDir()
	for _, tc := range []struct {
		s    Spec
		want string
	}{{abs, home}, {withCwd, dir}, {byDir, dir}, {perClient, dir}} {
		if got := tc.s.WorkDir(dir + "/"); got != tc.want {
			t.Errorf("%s sharing (cwd %q) runs in %s, want %s", tc.s.Sharing, tc.s.Dir, got, tc.want)
		}
	}
}
