//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A candidate's `version` is read with a bound: a file that floods stdout
// is refused as soon as it has printed more than a version's line, long
// before the probe's timeout, and the daemon holds at most that much of
// it; one that prints its version answers as before.
func TestProbeVersionIsBounded(t *testing.T) {
	dir := t.TempDir()
	script := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := script("good", `echo "hearthd 9.9.9"`)
	if out, err := probeVersion(good); err != nil || out != "hearthd 9.9.9" {
		t.Fatalf("a version: %q %v", out, err)
	}
	for name, body := range map[string]string{
		"a flood of lines":        `head -c 50000000 /dev/zero | tr '\0' '\n'`,
		"one endless line":        `head -c 50000000 /dev/zero`,
		"a version, then a flood": `echo "hearthd 9.9.9"; head -c 50000000 /dev/zero`,
	} {
		start := time.Now()
		out, err := probeVersion(script(strings.ReplaceAll(name, " ", "-"), body))
		if err == nil || !strings.Contains(err.Error(), "more than") {
			t.Errorf("%s: %q, %v", name, shortOut(out), err)
		}
		if d := time.Since(start); d > probeTimeout/2 {
			t.Errorf("%s: the probe took %v", name, d)
		}
	}
}

func shortOut(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}
