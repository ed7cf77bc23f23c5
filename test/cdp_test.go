//go:build linux

package test

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"
)

// browser is headless Chromium driven over the DevTools protocol through
// the pipes of --remote-debugging-pipe (fd 3: its commands, fd 4: its
// answers and events, each message a JSON object ended by a NUL byte): no
// websocket, no dependency.
type browser struct {
	t       *testing.T
	cmd     *exec.Cmd
	in      *os.File
	mu      sync.Mutex
	next    int
	pending map[int]chan cdpReply
	session string
	done    chan struct{}
}

type cdpReply struct {
	Result json.RawMessage
	Error  *struct {
		Code    int
		Message string
	}
}

// chromiumPath is Debian's chromium, if installed.
func chromiumPath() (string, bool) {
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, true
		}
	}
	return "", false
}

// startBrowser starts Chromium with a fresh profile and attaches to its
// page.
func startBrowser(t *testing.T) *browser {
	t.Helper()
	path, ok := chromiumPath()
	needOrSkip(t, ok, "chromium (Debian's chromium package; .ci/run installs it)")
	cmdR, cmdW, _ := os.Pipe()
	outR, outW, _ := os.Pipe()
	cmd := exec.Command(path, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--user-data-dir="+t.TempDir(),
		"--remote-debugging-pipe", "--window-size=1280,1500", "about:blank")
	cmd.ExtraFiles = []*os.File{cmdR, outW}
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	cmdR.Close()
	outW.Close()
	b := &browser{t: t, cmd: cmd, in: cmdW, pending: map[int]chan cdpReply{}, done: make(chan struct{})}
	t.Cleanup(func() {
		cmdW.Close()
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			t.Logf("chromium stderr (tail):\n%.3000s", tail(stderr.String(), 3000))
		}
	})
	go b.read(outR)
	var targets struct {
		TargetInfos []struct{ TargetID, Type string }
	}
	b.call("", "Target.getTargets", nil, &targets)
	for _, ti := range targets.TargetInfos {
		if ti.Type == "page" {
			var att struct{ SessionID string }
			b.call("", "Target.attachToTarget", map[string]any{"targetId": ti.TargetID, "flatten": true}, &att)
			b.session = att.SessionID
			break
		}
	}
	if b.session == "" {
		t.Fatalf("no page target: %+v", targets)
	}
	b.call(b.session, "Page.enable", nil, nil)
	b.call(b.session, "Emulation.setDeviceMetricsOverride", map[string]any{"width": 1280, "height": 1500, "deviceScaleFactor": 1, "mobile": false}, nil)
	return b
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

func (b *browser) read(out *os.File) {
	defer close(b.done)
	r := bufio.NewReader(out)
	for {
		msg, err := r.ReadBytes(0)
		if err != nil {
			return
		}
		var m struct {
			ID int
			cdpReply
		}
		if json.Unmarshal(msg[:len(msg)-1], &m) != nil || m.ID == 0 {
			continue // an event
		}
		b.mu.Lock()
		ch := b.pending[m.ID]
		delete(b.pending, m.ID)
		b.mu.Unlock()
		if ch != nil {
			ch <- m.cdpReply
		}
	}
}

// call sends one command and decodes its result into out (nil: ignored).
func (b *browser) call(session, method string, params any, out any) {
	b.t.Helper()
	if err := b.try(session, method, params, out); err != nil {
		b.t.Fatalf("%s: %v", method, err)
	}
}

func (b *browser) try(session, method string, params any, out any) error {
	b.mu.Lock()
	b.next++
	id := b.next
	ch := make(chan cdpReply, 1)
	b.pending[id] = ch
	b.mu.Unlock()
	msg := map[string]any{"id": id, "method": method}
	if params != nil {
		msg["params"] = params
	}
	if session != "" {
		msg["sessionId"] = session
	}
	raw, _ := json.Marshal(msg)
	if _, err := b.in.Write(append(raw, 0)); err != nil {
		return err
	}
	select {
	case rep := <-ch:
		if rep.Error != nil {
			return fmt.Errorf("%d %s", rep.Error.Code, rep.Error.Message)
		}
		if out != nil {
			return json.Unmarshal(rep.Result, out)
		}
		return nil
	case <-b.done:
		return errors.New("chromium exited")
	case <-time.After(30 * time.Second):
		return errors.New("no answer in 30s")
	}
}

// navigate loads url in the page and waits for its document.
func (b *browser) navigate(url string) {
	b.t.Helper()
	b.call(b.session, "Page.navigate", map[string]any{"url": url}, nil)
	b.waitFor(`document.readyState === "complete"`, 20*time.Second)
}

// eval runs a JavaScript expression in the page (awaiting a promise) and
// decodes its value into out.
func (b *browser) eval(expr string, out any) error {
	var res struct {
		Result           struct{ Value json.RawMessage }
		ExceptionDetails *struct {
			Text      string
			Exception struct{ Description string }
		}
	}
	if err := b.try(b.session, "Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true, "awaitPromise": true}, &res); err != nil {
		return err
	}
	if res.ExceptionDetails != nil {
		return fmt.Errorf("%s: %s %s", expr, res.ExceptionDetails.Text, res.ExceptionDetails.Exception.Description)
	}
	if out != nil {
		return json.Unmarshal(res.Result.Value, out)
	}
	return nil
}

// waitFor polls a JavaScript condition until it is true.
func (b *browser) waitFor(cond string, limit time.Duration) {
	b.t.Helper()
	deadline := time.Now().Add(limit)
	for {
		var ok bool
		err := b.eval("Boolean("+cond+")", &ok)
		if err == nil && ok {
			return
		}
		if time.Now().After(deadline) {
			var body string
			b.eval(`document.body ? document.body.innerText.slice(0, 3000) : ""`, &body)
			b.t.Fatalf("not true within %v: %s (%v)\npage:\n%s", limit, cond, err, body)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// screenshot writes the whole page as a PNG.
func (b *browser) screenshot(path string) {
	b.t.Helper()
	var shot struct{ Data string }
	b.call(b.session, "Page.captureScreenshot", map[string]any{"format": "png", "captureBeyondViewport": true}, &shot)
	png, err := base64.StdEncoding.DecodeString(shot.Data)
	if err != nil {
		b.t.Fatal(err)
	}
	if err := os.WriteFile(path, png, 0o644); err != nil {
		b.t.Fatal(err)
	}
}
