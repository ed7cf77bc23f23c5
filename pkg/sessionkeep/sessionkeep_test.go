package sessionkeep

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestRecordRoundTripIsPrivate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "http-sessions")
	d, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	id := "0123456789abcdef0123456789abcdef"
	rec := Record{ID: id, Path: "/mcp", Initialize: json.RawMessage(`{"protocolVersion":"2025-11-25"}`), LogLevel: "debug", Created: time.Now()}
	if err := d.Save(rec); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]os.FileMode{dir: 0o700, filepath.Join(dir, id+".json"): 0o600} {
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != want {
			t.Fatalf("%s: %v, mode %v, want %v", p, err, fi.Mode().Perm(), want)
		}
	}
	used := time.Now().Add(-time.Hour).Truncate(time.Second)
	if err := d.Touch(id, used); err != nil {
		t.Fatal(err)
	}
	got, err := d.Load(id)
	if err != nil || got.Path != "/mcp" || got.LogLevel != "debug" || string(got.Initialize) != string(rec.Initialize) || !got.Used.Equal(used) {
		t.Fatalf("Load: %+v, %v", got, err)
	}
	d.Sweep(30*time.Minute, time.Now())
	if _, err := d.Load(id); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a record unused for an hour survived the sweep: %v", err)
	}
}

// TestBadIDsNameNoFile: an Mcp-Session-Id is the client's to choose; only
// ids hearth gives out become a file name.
func TestBadIDsNameNoFile(t *testing.T) {
	d, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"", "../../../etc/passwd", "0123456789ABCDEF0123456789ABCDEF", "0123456789abcdef0123456789abcde/",
		"0123456789abcdef0123456789abcdef0", "0123456789abcdef", "0123456789abcdef0123456789abcde\x00", "..", "0123456789abcdef0123456789abcdeg"} {
		if ValidID(id) {
			t.Errorf("ValidID(%q)", id)
		}
		if _, err := d.Load(id); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("Load(%q): %v", id, err)
		}
		if err := d.Save(Record{ID: id}); !errors.Is(err, ErrBadID) {
			t.Errorf("Save(%q): %v", id, err)
		}
		if d.Remove(id) == nil || d.Touch(id, time.Now()) == nil {
			t.Errorf("Remove or Touch(%q) accepted", id)
		}
	}
}
