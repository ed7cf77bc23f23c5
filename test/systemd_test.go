//go:build unix

package test

import (
	"bytes"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestInstallServiceUnitsVerify renders the units with `install-service
// --dry-run`, writes them out, and has systemd-analyze verify them.
func TestInstallServiceUnitsVerify(t *testing.T) {
	analyze, err := exec.LookPath("systemd-analyze")
	needOrSkip(t, err == nil, "systemd-analyze (Debian package systemd)")
	cfg := t.TempDir()
	cmd := exec.Command(bin.hearthd, "install-service", "--dry-run")
	cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+cfg)
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	units := map[string]string{}
	var name string
	for _, line := range strings.SplitAfter(string(out), "\n") {
		if strings.HasPrefix(line, "# "+filepath.Join(cfg, "systemd", "user")) {
			name = filepath.Base(strings.TrimSpace(line[2:]))
			continue
		}
		units[name] += line
	}
	if !strings.Contains(units["hearthd.service"], "ExecStart="+bin.hearthd+" serve") ||
		!strings.Contains(units["hearthd.socket"], "SocketMode=0600") ||
		!strings.Contains(units["hearthd.service"], "RestartPreventExitStatus=3 65 78") {
		t.Fatalf("rendered units:\n%s", out)
	}
	for n, content := range units {
		os.WriteFile(filepath.Join(dir, n), []byte(content), 0o644)
	}
	verify := exec.Command(analyze, "verify", "--user", filepath.Join(dir, "hearthd.socket"), filepath.Join(dir, "hearthd.service"))
	verify.Env = append(os.Environ(), "XDG_RUNTIME_DIR="+shortTempDir(t))
	if report, err := verify.CombinedOutput(); err != nil || len(bytes.TrimSpace(report)) > 0 {
		t.Fatalf("systemd-analyze verify: %v\n%s", err, report)
	}
}

// TestInstallServiceWritesUnits installs into a private XDG_CONFIG_HOME with
// no systemctl on PATH: the units are written and the user is told how to
// enable them.
func TestInstallServiceWritesUnits(t *testing.T) {
	cfg := t.TempDir()
	cmd := exec.Command(bin.hearthd, "install-service")
	cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+cfg, "PATH=/nonexistent")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "systemctl --user enable --now hearthd.socket") {
		t.Fatalf("%v\n%s", err, out)
	}
	service, err := os.ReadFile(filepath.Join(cfg, "systemd", "user", "hearthd.service"))
	if err != nil || !strings.Contains(string(service), "ExecStart="+bin.hearthd+" serve") {
		t.Fatalf("service unit: %v\n%s", err, service)
	}
}

// TestSocketActivation: systemd-socket-activate binds the socket and passes
// it; hearthd serves on it without binding or unlinking anything itself.
func TestSocketActivation(t *testing.T) {
	activate, err := exec.LookPath("systemd-socket-activate")
	needOrSkip(t, err == nil, "systemd-socket-activate (Debian package systemd)")
	dir := shortTempDir(t)
	sock := filepath.Join(dir, "act.sock")
	cmd := exec.Command(activate, "-l", sock, bin.hearthd, "serve")
	// The daemon's own default path is elsewhere: it must use the passed fd.
	cmd.Env = append(os.Environ(), "XDG_RUNTIME_DIR="+dir, "MCP_SOCKET_PATH=", "MCP_READY_FILE="+filepath.Join(dir, "ready"), "HEARTH_HOME="+t.TempDir())
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := os.Stat(sock); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("systemd-socket-activate did not bind")
		}
		time.Sleep(5 * time.Millisecond)
	}
	out, err := exec.Command(filepath.Join(bin.dir, "rawping"), sock).CombinedOutput() // the first connection starts hearthd
	if err != nil || strings.TrimSpace(string(out)) != `{"jsonrpc":"2.0","id":1,"result":{}}` {
		t.Fatalf("ping: %v %s\n%s", err, out, stderr.String())
	}
	if !strings.Contains(stderr.String(), `"socket_activated":true`) {
		t.Fatalf("not socket-activated:\n%s", stderr.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "hearth", "hearthd.sock")); err == nil {
		t.Fatal("the daemon bound its own socket despite activation")
	}
}

// TestSdNotify reads the daemon's notifications from our own NOTIFY_SOCKET:
// READY=1 when serving, WATCHDOG=1 while healthy, STOPPING=1 on SIGTERM.
func TestSdNotify(t *testing.T) {
	dir := shortTempDir(t)
	notifyPath := filepath.Join(dir, "notify")
	nc, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: notifyPath, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	got := make(chan string, 100)
	go func() {
		buf := make([]byte, 4096)
		for {
			n, _, err := nc.ReadFromUnix(buf)
			if err != nil {
				close(got)
				return
			}
			got <- string(buf[:n])
		}
	}()
	d := startDaemon(t, "NOTIFY_SOCKET="+notifyPath, "WATCHDOG_USEC=200000")
	waitFor := func(want string) {
		t.Helper()
		timeout := time.After(15 * time.Second)
		for {
			select {
			case msg := <-got:
				if strings.Contains(msg, want) {
					return
				}
			case <-timeout:
				t.Fatalf("no %s from the daemon", want)
			}
		}
	}
	waitFor("READY=1")
	waitFor("WATCHDOG=1")
	waitFor("STATUS=serving")
	d.cmd.Process.Signal(syscall.SIGTERM)
	waitFor("STOPPING=1")
}
