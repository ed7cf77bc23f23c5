//go:build unix

package test

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestHTTPListenOnSIGHUP: http_listen added to the config file starts the
// HTTP endpoint on SIGHUP, with no restart; removed, SIGHUP stops it; the
// socket serves throughout.
func TestHTTPListenOnSIGHUP(t *testing.T) {
	dir := shortTempDir(t)
	cfg := filepath.Join(dir, "config.toml")
	os.WriteFile(cfg, []byte("# no HTTP yet\n"), 0o600)
	d := startDaemon(t, "HEARTH_CONFIG="+cfg)
	if strings.Contains(d.stderr.String(), "mcp:http") {
		t.Fatal("HTTP served without http_listen")
	}
	os.WriteFile(cfg, []byte("http_listen = \"127.0.0.1:0\"\n"), 0o600)
	d.cmd.Process.Signal(syscall.SIGHUP)
	var url string
	waitUntil(t, func() bool {
		for _, line := range strings.Split(d.stderr.String(), "\n") {
			if strings.Contains(line, "mcp:http url=") {
				var rec struct{ URL string }
				json.Unmarshal([]byte(line), &rec)
				url = rec.URL
			}
		}
		return url != ""
	})
	tok, err := os.ReadFile(filepath.Join(dir, "http-token"))
	if err != nil {
		t.Fatal(err)
	}
	initialize := func() (*http.Response, error) {
		req, _ := http.NewRequest("POST", url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(tok)))
		return http.DefaultClient.Do(req)
	}
	res, err := initialize()
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("initialize over HTTP after SIGHUP: %v %v", err, res)
	}
	res.Body.Close()

	os.WriteFile(cfg, []byte("# HTTP off again\n"), 0o600)
	d.cmd.Process.Signal(syscall.SIGHUP)
	waitUntil(t, func() bool {
		res, err := initialize()
		if err == nil {
			res.Body.Close()
		}
		return err != nil
	})
	c := dialRaw(t, d.socket)
	c.initialize()
	c.send(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	if line := c.recv(); !strings.Contains(line, `"result"`) {
		t.Fatalf("socket ping: %s", line)
	}
	if strings.Contains(d.stderr.String(), "takes effect after a restart") {
		t.Fatalf("http_listen said to need a restart:\n%s", d.stderr.String())
	}
}
