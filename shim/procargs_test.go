package shim

import (
	"encoding/binary"
	"slices"
	"strings"
	"testing"
)

// procArgs builds a kern.procargs2 record as macOS lays it out.
func procArgs(argc uint32, parts ...string) []byte {
	b := binary.LittleEndian.AppendUint32(nil, argc)
	for _, p := range parts {
		b = append(b, p...)
	}
	return b
}

func TestParseProcArgs(t *testing.T) {
	for _, c := range []struct {
		name string
		in   []byte
		env  []string
		ok   bool
	}{
		{"argc, path, padding, args, env, apple strings",
			procArgs(2, "/Applications/Claude.app/Contents/MacOS/Claude\x00\x00\x00\x00", "Claude\x00--flag\x00", "HOME=/Users/me\x00API_KEY=k=v\x00\x00", "executable_path=/x\x00ptr_munge=\x00"),
			[]string{"HOME=/Users/me", "API_KEY=k=v"}, true},
		{"no padding after the path", procArgs(1, "/bin/zsh\x00", "zsh\x00", "A=1\x00\x00"), []string{"A=1"}, true},
		{"no arguments", procArgs(0, "/bin/x\x00\x00", "A=1\x00B=2\x00"), []string{"A=1", "B=2"}, true},
		{"empty environment", procArgs(1, "/bin/x\x00", "x\x00", "\x00apple=1\x00"), nil, true},
		{"environment without its ending", procArgs(1, "/bin/x\x00", "x\x00", "A=1"), nil, true},
		{"cut inside the path", procArgs(1, "/bin/x"), nil, false},
		{"cut inside the arguments", procArgs(3, "/bin/x\x00", "x\x00y"), nil, false},
		{"shorter than argc", []byte{1, 0}, nil, false},
		{"empty", nil, nil, false},
	} {
		env, ok := parseProcArgs(c.in)
		if ok != c.ok || !slices.Equal(env, c.env) {
			t.Errorf("%s: got %q %v, want %q %v", c.name, env, ok, c.env, c.ok)
		}
	}
}

// Whatever the record, parsing never panics and yields only non-empty
// strings without NUL.
func FuzzParseProcArgs(f *testing.F) {
	f.Add(procArgs(2, "/bin/x\x00\x00", "x\x00y\x00", "A=1\x00\x00apple\x00"))
	f.Add(procArgs(0xffffffff, "/bin/x\x00"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		env, _ := parseProcArgs(b)
		for _, kv := range env {
			if kv == "" || strings.IndexByte(kv, 0) >= 0 {
				t.Fatalf("bad entry %q", kv)
			}
		}
	})
}
