package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// viaHearth is the client through hearth: a daemon of its own (a fresh
// home, runtime and state directory; HEARTH_OPEN_URL this command in
// -browse mode), `hearth run --url SERVER_URL` as its stdio server, or,
// for a pre-registered client, `hearth run conformance` with the client
// configured on the [servers.conformance] entry and its secret stored
// with `hearthd secret set`. It speaks 2025-11-25 to hearth whatever the
// server's revision: hearth's router meets a 2026-07-28 server itself.
func viaHearth(bin, server, cimd string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	tmp, err := os.MkdirTemp("", "rch")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	self, err := os.Executable()
	if err != nil {
		return err
	}
	runDir := filepath.Join(tmp, "run")
	if err := os.MkdirAll(runDir, 0o700); err != nil {
		return err
	}
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "HEARTH_") || strings.HasPrefix(k, "XDG_") || strings.HasPrefix(k, "MCP_SOCKET") || strings.HasPrefix(k, "MCP_READY") || k == "HOME" {
			continue
		}
		env = append(env, kv)
	}
	socket, ready := filepath.Join(runDir, "h.sock"), filepath.Join(runDir, "h.ready")
	config := filepath.Join(tmp, "config.toml")
	env = append(env, "HOME="+tmp, "XDG_RUNTIME_DIR="+runDir, "HEARTH_HOME="+filepath.Join(tmp, "home"), "HEARTH_CONFIG="+config,
		"MCP_SOCKET_PATH="+socket, "MCP_READY_FILE="+ready, "HEARTH_OPEN_URL="+self+" -browse")
	if cimd != "" {
		env = append(env, "HEARTH_CLIENT_METADATA_URL="+cimd)
	}
	runArgs := []string{"run", "--url", server}
	entry := ""
	if raw := os.Getenv("MCP_CONFORMANCE_CONTEXT"); raw != "" {
		var c struct {
			ClientID     string `json:"client_id"`
			ClientSecret string `json:"client_secret"`
			Issuer       string `json:"issuer"`
		}
		if err := json.Unmarshal([]byte(raw), &c); err != nil {
			return fmt.Errorf("MCP_CONFORMANCE_CONTEXT: %v", err)
		}
		if c.ClientID != "" {
			entry = fmt.Sprintf("[servers.conformance]\nurl = %s\nclient_id = %s\n", strconv.Quote(server), strconv.Quote(c.ClientID))
			if c.Issuer != "" {
				entry += fmt.Sprintf("client_issuer = %s\n", strconv.Quote(c.Issuer))
			}
			if c.ClientSecret != "" {
				entry += "client_secret = \"conformance-client\"\n"
				set := exec.Command(filepath.Join(bin, "hearthd"), "secret", "set", "conformance-client")
				set.Env, set.Stdin = env, strings.NewReader(c.ClientSecret)
				if out, err := set.CombinedOutput(); err != nil {
					return fmt.Errorf("hearthd secret set: %v: %s", err, out)
				}
			}
			runArgs = []string{"run", "conformance"}
		}
	}
	if err := os.WriteFile(config, []byte(entry), 0o600); err != nil {
		return err
	}
	daemonLog, err := os.Create(filepath.Join(tmp, "hearthd.log"))
	if err != nil {
		return err
	}
	d := exec.Command(filepath.Join(bin, "hearthd"), "serve")
	// idle_timeout: a daemon whose client was killed before it could stop
	// it does not outlive the scenario by long.
	d.Env = append(env, "HEARTH_LOG_LEVEL=debug", "HEARTH_IDLE_TIMEOUT=1m")
	d.Stderr = daemonLog
	if err := d.Start(); err != nil {
		return err
	}
	defer func() {
		d.Process.Signal(syscall.SIGTERM)
		d.Wait()
	}()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(ready); err == nil {
			break
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(filepath.Join(tmp, "hearthd.log"))
			return fmt.Errorf("hearthd never became ready:\n%s", log)
		}
	}
	err = converseThrough(ctx, filepath.Join(bin, "hearth"), runArgs, env)
	if err != nil {
		if log, rerr := os.ReadFile(filepath.Join(tmp, "hearthd.log")); rerr == nil {
			fmt.Fprintf(os.Stderr, "hearthd's log:\n%s\n", log)
		}
	}
	return err
}

func converseThrough(ctx context.Context, hearth string, args, env []string) error {
	cmd := exec.CommandContext(ctx, hearth, args...)
	cmd.Env = env
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	defer func() {
		in.Close()
		cmd.Wait()
	}()
	s := &session{write: func(b []byte) error { _, err := in.Write(append(b, '\n')); return err }, out: bufio.NewScanner(out)}
	s.out.Buffer(make([]byte, 1<<20), 64<<20)
	return s.converse(ctx)
}
