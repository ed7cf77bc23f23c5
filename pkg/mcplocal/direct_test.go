//go:build linux

package mcplocal

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/hearth-mcp/hearth/pkg/handoff"
)

// The daemon serves the client's stdio directly only when it is pipes or
// sockets, the region is one of its layout and the staging pipe's ends are
// one pipe's; anything else is refused (and the shim relays).
func TestTakeDescriptorsRefusesWhatItCannotServe(t *testing.T) {
	attach := []byte(`{"jsonrpc":"2.0","id":"hearth-attach","method":"$/hearth/attach","params":{"version":2,"swallow":"r-1"}}` + "\n")
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
	sr, sw := pipe()
	_, ow := pipe()

	r, limit, swallow, err := takeDescriptors(attach, in, out, int(mem.Fd()), sr, sw)
	if err != nil || limit != handoff.MaxBatch || string(swallow) != `"r-1"` {
		t.Fatalf("pipes: limit %d, swallow %s, %v", limit, swallow, err)
	}
	r.Close()
	if _, _, _, err := takeDescriptors(attach, in, int(file.Fd()), int(mem.Fd()), sr, sw); err == nil || !strings.Contains(err.Error(), "stdout is neither a pipe nor a socket") {
		t.Fatalf("a regular file as stdout: %v", err)
	}
	if _, _, _, err := takeDescriptors(attach, in, out, int(file.Fd()), sr, sw); err == nil || !strings.Contains(err.Error(), "not a handoff region") {
		t.Fatalf("a file that is no region: %v", err)
	}
	if _, _, _, err := takeDescriptors(attach, in, out, int(mem.Fd()), sr, ow); err == nil || !strings.Contains(err.Error(), "staging pipe") {
		t.Fatalf("the ends of two pipes as the staging pipe: %v", err)
	}
	if _, _, _, err := takeDescriptors(attach, in, out, int(mem.Fd()), int(file.Fd()), int(file.Fd())); err == nil || !strings.Contains(err.Error(), "staging pipe") {
		t.Fatalf("a file as the staging pipe: %v", err)
	}
	old := []byte(strings.Replace(string(attach), `"version":2`, `"version":99`, 1))
	if _, _, _, err := takeDescriptors(old, in, out, int(mem.Fd()), sr, sw); err == nil || !strings.Contains(err.Error(), "version") {
		t.Fatalf("another layout version: %v", err)
	}
}
