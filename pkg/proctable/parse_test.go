package proctable

import (
	"encoding/binary"
	"slices"
	"testing"
	"unicode/utf16"
)

// macOS's kern.procargs2 record, whole and cut short anywhere.
func TestParseProcArgs(t *testing.T) {
	rec := binary.LittleEndian.AppendUint32(nil, 2)
	rec = append(rec, "/usr/bin/node\x00\x00\x00\x00node\x00/srv/index.js\x00A=1\x00B=2\x00\x00ptr_munge=\x00"...)
	args, env, ok := parseProcArgs(rec)
	if !ok || !slices.Equal(args, []string{"node", "/srv/index.js"}) || !slices.Equal(env, []string{"A=1", "B=2"}) {
		t.Fatalf("%q %q %v", args, env, ok)
	}
	for n := range len("/usr/bin/node\x00\x00\x00\x00node\x00/srv/index.js") + 4 {
		if _, _, ok := parseProcArgs(rec[:n]); ok && n < 4+len("/usr/bin/node\x00\x00\x00\x00node\x00/srv/index.js\x00") {
			t.Fatalf("a record cut at %d parsed", n)
		}
	}
}

// A Windows environment block.
func TestEnvBlock(t *testing.T) {
	b := utf16.Encode([]rune("A=1\x00PATH=C:\\x\x00é=ü\x00\x00garbage"))
	if got := envBlock(b); !slices.Equal(got, []string{"A=1", `PATH=C:\x`, "é=ü"}) {
		t.Fatalf("%q", got)
	}
	if got := envBlock(utf16.Encode([]rune("A=1"))); !slices.Equal(got, []string{"A=1"}) {
		t.Fatalf("unterminated: %q", got)
	}
	if got := envBlock(nil); got != nil {
		t.Fatalf("empty: %q", got)
	}
}

// macOS's struct proc_taskinfo: resident size, user and system time.
func TestTaskInfo(t *testing.T) {
	b := make([]byte, 96)
	for i, v := range []uint64{1 << 40, 5 << 20, 300, 40} {
		binary.LittleEndian.PutUint64(b[8*i:], v)
	}
	if rss, user, sys := taskInfo(b); rss != 5<<20 || user != 300 || sys != 40 {
		t.Fatalf("%d %d %d", rss, user, sys)
	}
	if rss, _, _ := taskInfo(b[:31]); rss != 0 {
		t.Fatal("a short record read")
	}
}

// A tree: the root and what descends from it, not a process reparented out.
func TestTree(t *testing.T) {
	procs := []Proc{{Pid: 1}, {Pid: 10, PPid: 1}, {Pid: 11, PPid: 10}, {Pid: 12, PPid: 11}, {Pid: 13, PPid: 1}, {Pid: 14, PPid: 10}}
	var got []int
	for _, p := range Tree(procs, 10) {
		got = append(got, p.Pid)
	}
	if !slices.Equal(got, []int{10, 11, 14, 12}) {
		t.Fatalf("%v", got)
	}
	if Tree(procs, 99) != nil {
		t.Fatal("a tree of a pid not in the table")
	}
}
