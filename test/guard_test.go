//go:build unix

package test

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func hashTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.Name() == ".format_version.lock" {
			return err
		}
		if d.IsDir() {
			out[p] = "dir"
			return nil
		}
		b, _ := os.ReadFile(p)
		out[p] = fmt.Sprintf("%x", sha256.Sum256(b))
		return nil
	})
	return out
}

func runHearthd(t *testing.T, env []string, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(bin.hearthd, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdin = strings.NewReader("")
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), stderr.String()
	}
	if err != nil {
		t.Fatal(err)
	}
	return 0, stderr.String()
}

// TestGuardRefusesOtherFormatUntouched: hearthd serve and stdio exit 78 on a
// home in another format, say what to do, and leave every byte of it as it
// was, because the guard runs before any store is opened or socket bound. No
// variable turns the refusal into a warning.
func TestGuardRefusesOtherFormatUntouched(t *testing.T) {
	runtime := shortTempDir(t)
	home := filepath.Join(t.TempDir(), "home")
	os.MkdirAll(filepath.Join(home, "index"), 0o700)
	os.WriteFile(filepath.Join(home, ".format_version"), []byte("2.0\n2.3.1+future\n"), 0o600)
	os.WriteFile(filepath.Join(home, "memory.db"), []byte("not touched"), 0o600)
	os.WriteFile(filepath.Join(home, "index", "x.db"), []byte("idx"), 0o600)
	before := hashTree(t, home)
	env := []string{"HEARTH_HOME=" + home, "XDG_RUNTIME_DIR=" + runtime, "MCP_SOCKET_PATH=", "MCP_READY_FILE=",
		"HEARTH_GUARD=warn", "HEARTH_SKIP_VERSION_CHECK=1"}
	for _, mode := range []string{"serve", "stdio"} {
		code, out := runHearthd(t, env, mode)
		if code != 78 || !strings.Contains(out, "format 2.0 (written by hearthd 2.3.1+future)") || !strings.Contains(out, "upgrade hearthd") {
			t.Fatalf("%s: exit %d\n%s", mode, code, out)
		}
	}
	if after := hashTree(t, home); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Fatalf("the refused home changed:\nbefore %v\nafter  %v", before, after)
	}
	if socks, _ := filepath.Glob(filepath.Join(runtime, "hearth", "*.sock")); len(socks) != 0 {
		t.Fatal("a socket was bound before the guard refused")
	}
}

// TestGuardLegacyHomeAndAdopt: data without a marker exits 65;
// `hearthd migrate --adopt` is the explicit way forward.
func TestGuardLegacyHomeAndAdopt(t *testing.T) {
	home := t.TempDir()
	os.WriteFile(filepath.Join(home, "memory.db"), []byte("old"), 0o600)
	env := []string{"HEARTH_HOME=" + home}
	if code, out := runHearthd(t, env, "stdio"); code != 65 || !strings.Contains(out, "hearthd migrate --adopt") {
		t.Fatalf("legacy: exit %d\n%s", code, out)
	}
	if code, out := runHearthd(t, env, "migrate"); code != 65 {
		t.Fatalf("migrate without --adopt: exit %d\n%s", code, out)
	}
	if code, out := runHearthd(t, env, "migrate", "--adopt"); code != 0 || !strings.Contains(out, "adopted") {
		t.Fatalf("migrate --adopt: exit %d\n%s", code, out)
	}
	if code, out := runHearthd(t, env, "migrate"); code != 0 || !strings.Contains(out, "nothing to do") {
		t.Fatalf("migrate again: exit %d\n%s", code, out)
	}
	if code, out := runHearthd(t, env, "stdio"); code != 0 || !strings.Contains(out, "format_version check passed") {
		t.Fatalf("after adopt: exit %d\n%s", code, out)
	}
}

// TestGuardFreshHome: a fresh home gets its marker and the passed check is
// logged.
func TestGuardFreshHome(t *testing.T) {
	home := filepath.Join(t.TempDir(), "fresh")
	code, out := runHearthd(t, []string{"HEARTH_HOME=" + home}, "stdio")
	if code != 0 || !strings.Contains(out, "format_version check passed: fresh home") {
		t.Fatalf("exit %d\n%s", code, out)
	}
	b, _ := os.ReadFile(filepath.Join(home, ".format_version"))
	if !strings.HasPrefix(string(b), "1.0\n0.1.0+") {
		t.Fatalf("marker %q", b)
	}
}
