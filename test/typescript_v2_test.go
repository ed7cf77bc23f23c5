//go:build unix

package test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"syscall"
	"testing"
)

// The TypeScript SDK v2 client (@modelcontextprotocol/client), run by
// test/ts/v2client.mjs with the v2 stdio transport's default environment.

// TestTypeScriptSDKv2ThroughShim: the v2 client starts `hearth` with only
// HOME, PATH and the like; the shim finds the user's daemon through the
// data directory under HOME. Once with the SDK's default version
// negotiation (the 2025 handshake), once with the server/discover probe
// (auto), which hearth answers: that connection is of the 2026-07-28 era.
func TestTypeScriptSDKv2ThroughShim(t *testing.T) {
	needV2Client(t)
	env, pid := startUserDaemon(t)
	for _, negotiation := range []string{"", "auto"} {
		name := negotiation
		if name == "" {
			name = "default"
		}
		t.Run(name, func(t *testing.T) {
			got := runV2Client(t, env, negotiation, "socket", bin.hearth)
			if got.Status.Structured["pid"] != float64(pid) {
				t.Fatalf("daemon_status names pid %v; the user's daemon is pid %d: the shim did not reach it through HOME",
					got.Status.Structured["pid"], pid)
			}
		})
	}
}

// TestTypeScriptSDKv2OverStdio: the v2 client starts `hearthd stdio`
// directly, with its default environment, in a home nobody serves.
func TestTypeScriptSDKv2OverStdio(t *testing.T) {
	needV2Client(t)
	user := shortTempDir(t)
	t.Cleanup(func() { killDaemonsOfHome(user) })
	for _, negotiation := range []string{"", "auto"} {
		name := negotiation
		if name == "" {
			name = "default"
		}
		t.Run(name, func(t *testing.T) {
			runV2Client(t, cleanEnv(user), negotiation, "stdio", bin.hearthd, "stdio")
		})
	}
}

// needV2Client skips (fails in CI) when node or the v2 client package is missing.
func needV2Client(t *testing.T) {
	t.Helper()
	needNode(t)
	_, err := os.Stat(filepath.Join("ts", "node_modules", "@modelcontextprotocol", "client", "package.json"))
	needOrSkip(t, err == nil, "test/ts/node_modules/@modelcontextprotocol/client (npm ci in test/ts)")
}

// v2Result is what v2client.mjs keeps of a tools/call result.
type v2Result struct {
	IsError    bool
	Structured map[string]any
	Text       string
}

type v2Summary struct {
	Server          struct{ Name string }
	ProtocolVersion string
	Era             string
	Pinged          bool
	Tools           []struct {
		Name        string
		Meta        map[string]any
		Annotations map[string]any
	}
	Status, Schemas, Validate, Bad v2Result
}

// runV2Client runs v2client.mjs against command and checks what every
// hearth endpoint must give it; wantMode is daemon_status's mode.
func runV2Client(t *testing.T, env []string, negotiation, wantMode string, command ...string) v2Summary {
	t.Helper()
	args := command
	if negotiation != "" {
		args = append([]string{"--negotiation=" + negotiation}, command...)
	}
	out := runNodeScript(t, env, "v2client.mjs", args...)
	var got v2Summary
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("v2 client output %q: %v", out, err)
	}
	t.Logf("v2 client: protocol version %q, era %q", got.ProtocolVersion, got.Era)
	if got.Server.Name != "hearth" || got.ProtocolVersion == "" || (got.Era != "modern" && !got.Pinged) {
		t.Fatalf("server %+v, protocol version %q, pinged %v", got.Server, got.ProtocolVersion, got.Pinged)
	}
	wantEra := "legacy"
	if negotiation == "auto" {
		wantEra = "modern" // hearth answers the server/discover probe
	}
	if got.Era != wantEra {
		t.Fatalf("negotiation %q: era %q, want %s", negotiation, got.Era, wantEra)
	}
	var listed []string
	for _, tl := range got.Tools {
		listed = append(listed, tl.Name)
		if tl.Meta["dev.hearth/schemaVersion"] == nil || tl.Annotations == nil {
			t.Fatalf("tool %s lacks contract fields through the v2 client: %+v", tl.Name, tl)
		}
	}

	st := got.Status
	if st.IsError || st.Structured["mode"] != wantMode {
		t.Fatalf("daemon_status: isError %v, mode %v (want %s): %s", st.IsError, st.Structured["mode"], wantMode, st.Text)
	}
	var text map[string]any
	if err := json.Unmarshal([]byte(st.Text), &text); err != nil || text["mode"] != wantMode {
		t.Fatalf("daemon_status content[0].text is not the same JSON: %q", st.Text)
	}
	sameTools(t, "the v2 client's tools/list", listed, st.Structured)

	if got.Schemas.IsError || got.Schemas.Structured["ok"] != true || !hasShader(got.Schemas.Structured["schemas"]) {
		t.Fatalf("list_schemas: %+v", got.Schemas)
	}
	if v := got.Validate; v.IsError || v.Structured["ok"] != false || v.Structured["errors"] == nil {
		t.Fatalf("validate_asset of an empty shader: want ok=false without isError, got %+v", v)
	}
	if b := got.Bad; !b.IsError || b.Structured["code"] != "INVALID_REQUEST" {
		t.Fatalf("unknown argument: want isError with code INVALID_REQUEST, got %+v", b)
	}
	return got
}

// sameTools fails unless listed names exactly the tools daemon_status
// reports (status is its structured result).
func sameTools(t *testing.T, who string, listed []string, status map[string]any) {
	t.Helper()
	var served []string
	entries, _ := status["tools"].([]any)
	for _, e := range entries {
		if m, ok := e.(map[string]any); ok {
			name, _ := m["name"].(string)
			served = append(served, name)
		}
	}
	listed = append([]string(nil), listed...)
	sort.Strings(listed)
	sort.Strings(served)
	a, _ := json.Marshal(listed)
	b, _ := json.Marshal(served)
	if len(served) == 0 || !bytes.Equal(a, b) {
		t.Fatalf("%s has %s; daemon_status serves %s", who, a, b)
	}
	found := false
	for _, n := range listed {
		found = found || n == "daemon_status"
	}
	if !found {
		t.Fatalf("%s lacks daemon_status: %s", who, a)
	}
}

// hasShader reports whether list_schemas' schemas include "shader".
func hasShader(schemas any) bool {
	list, _ := schemas.([]any)
	for _, s := range list {
		if m, ok := s.(map[string]any); ok && m["name"] == "shader" {
			return true
		}
	}
	return false
}

// startUserDaemon starts the daemon of a fresh user (HOME a temp dir) the
// way an editor with the full environment does: a Go SDK client through the
// shim with XDG_RUNTIME_DIR set, which autostarts it in a private runtime
// directory. It returns the user's environment and the daemon's pid; the
// daemon is killed at cleanup. A client whose default environment drops
// XDG_RUNTIME_DIR reaches this daemon only through the data directory.
func startUserDaemon(t *testing.T) (env []string, pid int) {
	t.Helper()
	user := shortTempDir(t)
	runtime := shortTempDir(t)
	t.Cleanup(func() { killDaemonsIn(runtime); killDaemonsOfHome(user) })
	env = append(cleanEnv(user), "XDG_RUNTIME_DIR="+runtime)
	cs := shimSession(t, env)
	res := callTool(t, cs, "daemon_status", map[string]any{})
	st, _ := res.StructuredContent.(map[string]any)
	pids := daemonsIn(runtime)
	if res.IsError || st["mode"] != "socket" || len(pids) != 1 || st["pid"] != float64(pids[0]) {
		t.Fatalf("the shim's daemon: status %v; daemons in %s: %v", st, runtime, pids)
	}
	return env, pids[0]
}

// killDaemonsOfHome kills every hearthd whose HOME is home: a daemon that a
// client with a minimal environment autostarted outside any test runtime
// directory.
func killDaemonsOfHome(home string) {
	for _, pid := range daemonsWithEnv("HOME=" + home) {
		syscall.Kill(pid, syscall.SIGKILL)
	}
}
