//go:build unix

package test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hearth-mcp/hearth/pkg/safefile/safefiletest"
)

// TestSpecialFilesAnswerAtOnce: resources/read, get_example and show_file of
// a FIFO, a socket or a device answer at once over the socket, saying what
// the file is, and the connection keeps serving. (Opening a FIFO for reading
// waits for a writer: resources/read of one used to never answer.)
func TestSpecialFilesAnswerAtOnce(t *testing.T) {
	schemas, examples, repo := t.TempDir(), t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(schemas, "part.schema.json"), []byte(`{"type":"object"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	specials := safefiletest.Make(t, filepath.Join(examples, "special"))
	safefiletest.Make(t, filepath.Join(repo, "special"))
	if len(specials) == 0 {
		t.Skip("no special files on this system")
	}
	d := startDaemon(t, "SYN_SCHEMAS_DIR="+schemas, "SYN_EXAMPLES_DIR="+examples)
	c := dialRaw(t, d.socket)
	c.initialize()
	for i, sp := range specials {
		path := "special/" + sp.Name
		want := path + " is a " + sp.Kind + ", not a regular file"
		c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"resources/read","params":{"uri":"hearth://examples/%s"}}`, 100+i, path))
		if line := c.recvWithin(5 * time.Second); !strings.Contains(line, `"code":-32002`) || !strings.Contains(line, fmt.Sprintf(`"id":%d`, 100+i)) {
			t.Errorf("resources/read of a %s: %s", sp.Kind, line)
		}
		c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"get_example","arguments":{"path":%q}}}`, 200+i, path))
		if line := c.recvWithin(5 * time.Second); !strings.Contains(line, want) {
			t.Errorf("get_example of a %s: %s", sp.Kind, line)
		}
		c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"show_file","arguments":{"path":%q,"repo_path":%q}}}`, 300+i, path, repo))
		if line := c.recvWithin(5 * time.Second); !strings.Contains(line, want) || !strings.Contains(line, `"isError":true`) {
			t.Errorf("show_file of a %s: %s", sp.Kind, line)
		}
	}
	c.send(`{"jsonrpc":"2.0","id":999,"method":"ping"}`)
	if line := c.recvWithin(5 * time.Second); line != `{"jsonrpc":"2.0","id":999,"result":{}}` {
		t.Fatalf("ping after: %s", line)
	}
}
