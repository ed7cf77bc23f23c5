//go:build linux

package hosted

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// hearthd servers restart|stop X: X is a server's name (all its instances
// when they are one server in several directories), its label, or a key
// prefix of one instance; a name of several servers, or a prefix of
// several keys, is refused listing the matches; an unknown X is refused
// listing what runs. Nothing here starts a process: instances start with
// their first request.
func TestFindInstances(t *testing.T) {
	tb := newTable(t)
	inline := func(cmd string) Spec {
		f := strings.Fields(cmd)
		return Spec{Command: f[0], Args: f[1:], Sharing: Directory}
	}
	everything := inline("/usr/bin/npx -y @m/server-everything")
	files := inline("/usr/bin/npx -y @m/server-filesystem@1.0 /data")
	indexA := inline("/usr/bin/node index.js")
	indexB := inline("/usr/bin/node index.js --port 3")
	cfg := testSpec("normal", Directory)
	// Two specs whose keys share their first four hex digits.
	var twinA, twinB Spec
	seen := map[string]Spec{}
	for i := 0; twinB.Command == ""; i++ {
		s := inline(fmt.Sprintf("/opt/twin %d", i))
		k := s.Key(s.Scope("/p1", 0), testShape)[:minKeyPrefix]
		if prev, ok := seen[k]; ok {
			twinA, twinB = prev, s
		}
		seen[k] = s
	}
	for _, a := range []struct {
		spec Spec
		dir  string
	}{{everything, "/p1"}, {everything, "/p2"}, {files, "/p1"}, {indexA, "/p1"}, {indexB, "/p2"}, {cfg, "/p1"}, {cfg, "/p2"}, {twinA, "/p1"}, {twinB, "/p1"}} {
		attach(t, tb, a.spec, a.dir)
	}
	key := func(s Spec, dir string) string { return s.Key(s.Scope(dir, 0), testShape) }
	for _, tc := range []struct {
		q         string
		n         int
		ambiguous bool
		listed    []string // in the refusal
	}{
		{q: "@m/server-everything", n: 2},
		{q: "@m/server-filesystem", n: 1},
		{q: "npx -y @m/server-filesystem@1.0 /data", n: 1}, // the label status shows
		{q: "test-normal", n: 2},                           // a config name: one server, two directories
		{q: key(everything, "/p2")[:6], n: 1},
		{q: key(indexB, "/p2"), n: 1},
		{q: "index.js", ambiguous: true, listed: []string{key(indexA, "/p1"), key(indexB, "/p2"), "/p1", "/p2"}},
		{q: key(twinA, "/p1")[:minKeyPrefix], ambiguous: true, listed: []string{key(twinA, "/p1"), key(twinB, "/p1")}},
		{q: "npx", listed: []string{"@m/server-everything", key(files, "/p1"), "test-normal"}},
		{q: key(files, "/p1")[:3], listed: []string{key(files, "/p1")}}, // too short for a key prefix
		{q: "nosuch", listed: []string{"index.js"}},
	} {
		list, err := tb.find(tc.q, "restart")
		var fe *FindError
		switch {
		case tc.n > 0:
			if err != nil || len(list) != tc.n {
				t.Errorf("%q: %d instances, %v; want %d", tc.q, len(list), err, tc.n)
			}
		case !errors.As(err, &fe) || fe.Ambiguous != tc.ambiguous || len(list) != 0:
			t.Errorf("%q: %d instances, %v; want a refusal (ambiguous %v)", tc.q, len(list), err, tc.ambiguous)
		default:
			for _, want := range tc.listed {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("%q: the refusal does not list %s: %v", tc.q, want, err)
				}
			}
			if tc.ambiguous && len(fe.Matches) != 2 {
				t.Errorf("%q: matches %+v", tc.q, fe.Matches)
			}
		}
	}
	// Stop takes the same names: both instances of the config server go.
	if n, err := tb.Stop("test-normal"); n != 2 || err != nil {
		t.Fatalf("stop test-normal: %d %v", n, err)
	}
	if n, err := tb.Restart("test-normal"); n != 0 || err == nil {
		t.Fatalf("restart after stop: %d %v", n, err)
	}
}
