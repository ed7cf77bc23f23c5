package localsock

import (
	"strings"
	"testing"
)

func TestPipeName(t *testing.T) {
	const me = "S-1-5-21-1-2-3-1001"
	a := PipeName(me, `C:\Users\ann\AppData\Local\hearth\hearthd.sock`)
	if !strings.HasPrefix(a, PipePrefix+me+"-") {
		t.Fatalf("%s: not the user's pipe", a)
	}
	if strings.Contains(strings.TrimPrefix(a, `\\.\pipe\`), `\`) || len(a) > 256 {
		t.Fatalf("%s: not a valid pipe name", a)
	}
	for _, same := range []string{`c:\users\ANN\appdata\local\hearth\hearthd.sock`, `C:/Users/ann/AppData/Local/hearth/hearthd.sock`} {
		if got := PipeName(me, same); got != a {
			t.Errorf("%s: %s, want %s (the same place)", same, got, a)
		}
	}
	for name, other := range map[string]string{
		"another data directory": PipeName(me, `C:\Users\ann\AppData\Local\hearth\hearthd-1a2b.sock`),
		"another user":           PipeName("S-1-5-21-1-2-3-1002", `C:\Users\ann\AppData\Local\hearth\hearthd.sock`),
	} {
		if other == a {
			t.Errorf("%s has the same pipe %s", name, a)
		}
	}
}

func TestPipeSDDL(t *testing.T) {
	const me = "S-1-5-21-1-2-3-1001"
	want := "O:S-1-5-21-1-2-3-1001D:P(A;;GA;;;S-1-5-21-1-2-3-1001)(A;;GA;;;S-1-5-18)"
	if got := PipeSDDL(me); got != want {
		t.Fatalf("PipeSDDL = %s, want %s", got, want)
	}
	// What the list grants is what Judge accepts for a socket: the user and
	// the system, nothing inherited.
	if strings.Count(PipeSDDL(me), "(A;") != 2 || !strings.Contains(PipeSDDL(me), "D:P(") {
		t.Fatalf("%s: more than the user and the system, or not protected", PipeSDDL(me))
	}
}
