package command

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

func TestIsName(t *testing.T) {
	cases := map[string]bool{"npx": true, "server-everything": true, "./srv": false, "bin/srv": false, "/usr/bin/env": false, "": true}
	if runtime.GOOS == "windows" {
		cases[`.\srv.cmd`] = false
	}
	for cmd, want := range cases {
		if got := IsName(cmd); got != want {
			t.Errorf("IsName(%q) = %v, want %v", cmd, got, want)
		}
	}
}

func TestResolveAndAbsolute(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh on PATH")
	}
	if got := Resolve("sh"); got != sh {
		t.Errorf("Resolve(sh) = %q, want %q", got, sh)
	}
	if got := Absolute("sh"); got != sh {
		t.Errorf("Absolute(sh) = %q, want %q", got, sh)
	}
	const missing = "hearth-no-such-program-anywhere"
	if got := Resolve(missing); got != missing {
		t.Errorf("a name not found: %q, want it bare", got)
	}
	if got := Absolute(missing); got != missing {
		t.Errorf("a name not found: %q, want it bare", got)
	}
	// A path: as it is for Resolve, against the working directory for Absolute.
	if got := Resolve("./bin/srv"); got != "./bin/srv" {
		t.Errorf("Resolve(./bin/srv) = %q", got)
	}
	wd, _ := os.Getwd()
	if got, want := Absolute("./bin/srv"), filepath.Join(wd, "bin", "srv"); got != want {
		t.Errorf("Absolute(./bin/srv) = %q, want %q", got, want)
	}
}
