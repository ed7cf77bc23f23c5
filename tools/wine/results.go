//go:build ignore

// results reads `go test -json` from stdin and reports, per package, the
// tests that passed, were skipped or failed, setting apart the failures
// whose only complaint is testing's TempDir cleanup under Wine 8: Go 1.26's
// os.RemoveAll deletes with NtSetInformationFile(FileDispositionInformationEx),
// which Wine 8 does not implement ("fixme:file:NtSetInformationFile
// Unsupported class (64)", Win32 "Invalid function."), and Go falls back to
// the older call only for other statuses. Such a test did everything it
// asserts. A test that said anything (t.Log, or t.Skip's reason before the
// cleanup failed it) counts as failed: its output cannot be told from an
// error's. Exit status 1 when any other failure remains.
//
// Usage: GOOS=windows go test -json -exec wine64 ./pkg/x/ | go run tools/wine/results.go
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
)

type event struct {
	Action, Package, Test, Output string
}

type test struct {
	action string
	own    []string // output that is not testing's own framing or Wine's cleanup complaint
}

func noise(line string) bool {
	t := strings.TrimSpace(line)
	return t == "" || strings.HasPrefix(t, "=== ") || strings.HasPrefix(t, "--- ") ||
		(strings.Contains(t, "TempDir RemoveAll cleanup") && strings.HasSuffix(t, "Invalid function."))
}

func main() {
	tests := map[string]*test{} // package + "\x00" + test
	pkgOut := map[string][]string{}
	pkgAction := map[string]string{}
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var e event
		if json.Unmarshal(sc.Bytes(), &e) != nil {
			fmt.Println(sc.Text()) // the build's own messages
			continue
		}
		if e.Test == "" {
			if e.Action == "output" {
				pkgOut[e.Package] = append(pkgOut[e.Package], e.Output)
			} else if e.Action == "pass" || e.Action == "fail" || e.Action == "skip" {
				pkgAction[e.Package] = e.Action
			}
			continue
		}
		k := e.Package + "\x00" + e.Test
		t := tests[k]
		if t == nil {
			t = &test{}
			tests[k] = t
		}
		switch e.Action {
		case "output":
			if !noise(e.Output) {
				t.own = append(t.own, e.Output)
			}
		case "pass", "fail", "skip":
			t.action = e.Action
		}
	}
	// A failed test is a real failure when it said something itself or a
	// subtest of it failed for real.
	real := func(k string) bool { return false }
	real = func(k string) bool {
		t := tests[k]
		if t.action != "fail" {
			return false
		}
		if len(t.own) > 0 {
			return true
		}
		for c := range tests {
			if strings.HasPrefix(c, k+"/") && real(c) {
				return true
			}
		}
		return false
	}
	type count struct{ pass, skip, fail, wine int }
	counts := map[string]*count{}
	var keys []string
	for k := range tests {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	bad := false
	for _, k := range keys {
		pkg, name, _ := strings.Cut(k, "\x00")
		if counts[pkg] == nil {
			counts[pkg] = &count{}
		}
		c := counts[pkg]
		switch t := tests[k]; {
		case t.action == "pass":
			c.pass++
		case t.action == "skip":
			c.skip++
		case t.action == "fail" && real(k):
			c.fail++
			bad = true
			if len(t.own) > 0 {
				fmt.Printf("FAIL %s %s\n%s", pkg, name, strings.Join(t.own, ""))
			}
		case t.action == "fail":
			c.wine++
		default: // never ended: the binary died or timed out
			c.fail++
			bad = true
			fmt.Printf("UNFINISHED %s %s\n", pkg, name)
		}
	}
	for pkg, a := range pkgAction {
		if counts[pkg] == nil && a == "fail" {
			bad = true
			fmt.Printf("FAIL %s\n%s", pkg, strings.Join(pkgOut[pkg], ""))
		}
	}
	var pkgs []string
	for p := range counts {
		pkgs = append(pkgs, p)
	}
	sort.Strings(pkgs)
	for _, p := range pkgs {
		c := counts[p]
		fmt.Printf("%s: %d passed, %d passed but Wine failed their TempDir cleanup, %d skipped, %d failed\n", p, c.pass, c.wine, c.skip, c.fail)
	}
	if bad {
		os.Exit(1)
	}
}
