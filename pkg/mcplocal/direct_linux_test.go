package mcplocal

import (
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/hearth-mcp/hearth/pkg/rawio"
)

// A stdio daemon reads a pipe through the poller and a file as it is;
// closing what it reads closes its stdin either way.
func TestStdioInput(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	in := stdioInput(r)
	if rc, ok := in.(readCloser); !ok {
		t.Fatalf("a pipe is read as %T, want the poller's reader", in)
	} else if _, ok := rc.Reader.(*rawio.Reader); !ok {
		t.Fatalf("a pipe is read through %T", rc.Reader)
	}
	w.Write([]byte("{}\n"))
	w.Close()
	got, err := io.ReadAll(in)
	if err != nil || string(got) != "{}\n" {
		t.Fatalf("read %q, %v", got, err)
	}
	if err := in.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Stat(); err == nil {
		t.Fatal("closing the reader left stdin open")
	}

	f, err := os.Create(filepath.Join(t.TempDir(), "frames"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if in := stdioInput(f); in != io.ReadCloser(f) {
		t.Fatalf("a file is read as %T, want the file itself", in)
	}
}
