//go:build linux

package daemon

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/hearth-mcp/hearth/pkg/handoff"
)

// The daemon serves the client's stdio directly only when it is pipes or
// sockets and the region is one of its layout; anything else is refused
// (and the shim relays).
func TestTakeDescriptorsRefusesWhatItCannotServe(t *testing.T) {
	attach := []byte(`{"jsonrpc":"2.0","id":"hearth-attach","method":"$/hearth/attach","params":{"version":1,"swallow":"r-1"}}` + "\n")
	pipe := func() (int, int) {
		var p [2]int
		if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { unix.Close(p[0]); unix.Close(p[1]) })
		return p[0], p[1]
	}
	file, err := os.Create(filepath.Join(t.TempDir(), "out"))
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	region, mem, err := handoff.Create()
	if err != nil {
		t.Fatal(err)
	}
	defer region.Close()
	in, _ := pipe()
	_, out := pipe()

	r, limit, swallow, err := takeDescriptors(attach, in, out, int(mem.Fd()))
	if err != nil || limit != handoff.PipeLimit || string(swallow) != `"r-1"` {
		t.Fatalf("pipes: limit %d, swallow %s, %v", limit, swallow, err)
	}
	r.Close()
	if _, _, _, err := takeDescriptors(attach, in, int(file.Fd()), int(mem.Fd())); err == nil || !strings.Contains(err.Error(), "stdout is neither a pipe nor a socket") {
		t.Fatalf("a regular file as stdout: %v", err)
	}
	if _, _, _, err := takeDescriptors(attach, in, out, int(file.Fd())); err == nil || !strings.Contains(err.Error(), "not a handoff region") {
		t.Fatalf("a file that is no region: %v", err)
	}
	old := []byte(strings.Replace(string(attach), `"version":1`, `"version":99`, 1))
	if _, _, _, err := takeDescriptors(old, in, out, int(mem.Fd())); err == nil || !strings.Contains(err.Error(), "version") {
		t.Fatalf("another layout version: %v", err)
	}
}
