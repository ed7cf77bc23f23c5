package secret

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The real Secret Service: a private D-Bus session bus with Debian's
// gnome-keyring-daemon on it (its login keyring unlocked with a test
// password), used through go-keyring exactly as on a desktop. Skipped
// where either is missing, except under CI=true (.ci/run installs them).
func TestSecretServiceForReal(t *testing.T) {
	dbusDaemon, err1 := exec.LookPath("dbus-daemon")
	keyringDaemon, err2 := exec.LookPath("gnome-keyring-daemon")
	if err1 != nil || err2 != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("dbus-daemon (%v) or gnome-keyring-daemon (%v) missing; CI must have them (.ci/run installs them)", err1, err2)
		}
		t.Skip("dbus-daemon or gnome-keyring-daemon missing (apt-get install dbus-daemon gnome-keyring)")
	}
	home := t.TempDir()
	run := filepath.Join(home, "run")
	os.Mkdir(run, 0o700)
	env := append(os.Environ(), "HOME="+home, "XDG_RUNTIME_DIR="+run, "XDG_DATA_HOME="+filepath.Join(home, "data"))
	bus := exec.Command(dbusDaemon, "--session", "--nofork", "--print-address=1", "--address=unix:path="+filepath.Join(run, "bus"))
	bus.Env = env // what it starts on demand keeps its keyrings in the test's home too
	out, _ := bus.StdoutPipe()
	bus.Stderr = os.Stderr
	if err := bus.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { bus.Process.Kill(); bus.Wait() })
	addr, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	addr = strings.TrimSpace(addr)
	env = append(env, "DBUS_SESSION_BUS_ADDRESS="+addr)
	// Without --foreground it forks, unlocks the login keyring, takes the
	// bus name and only then exits, so nothing asks the bus to start an
	// instance of its own (which would be locked); it ends with the bus.
	gk := exec.Command(keyringDaemon, "--unlock", "--components=secrets")
	gk.Env = env
	gk.Stdin = strings.NewReader("test-password")
	if out, err := gk.CombinedOutput(); err != nil {
		t.Fatalf("gnome-keyring-daemon: %v\n%s", err, out)
	}
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", addr)

	kr := System()
	// The daemon takes the bus name once it has read the password.
	for deadline := time.Now().Add(10 * time.Second); ; {
		if err = kr.Set(service, "probe", "x"); err == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("the Secret Service did not answer: %v", err)
	}
	dir := t.TempDir()
	v := open(t, dir, Store, kr)
	if err := v.Set("oauth/a", "refresh-token-value"); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(v.Path())
	if !strings.Contains(string(raw), `"key":"keyring"`) || strings.Contains(string(raw), "refresh-token-value") {
		t.Fatalf("vault: %s", raw)
	}
	w := open(t, dir, Store, kr)
	if got, ok, err := w.Get("oauth/a"); err != nil || !ok || got != "refresh-token-value" {
		t.Fatalf("read back through the Secret Service: %q %v %v", got, ok, err)
	}
	if _, err := kr.Get(service, "no-such-item"); err != ErrNotFound {
		t.Fatalf("missing item: %v", err)
	}
}
