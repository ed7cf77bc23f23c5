package secret

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// memKeyring is a credential store in memory; down makes it refuse.
type memKeyring struct {
	mu   sync.Mutex
	m    map[string]string
	down bool
}

func newMem() *memKeyring { return &memKeyring{m: map[string]string{}} }

var errDown = errors.New("org.freedesktop.DBus.Error.ServiceUnknown")

func (k *memKeyring) Get(s, u string) (string, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.down {
		return "", errDown
	}
	v, ok := k.m[s+"/"+u]
	if !ok {
		return "", ErrNotFound
	}
	return v, nil
}

func (k *memKeyring) Set(s, u, v string) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.down {
		return errDown
	}
	k.m[s+"/"+u] = v
	return nil
}

func (k *memKeyring) Delete(s, u string) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	delete(k.m, s+"/"+u)
	return nil
}

func open(t *testing.T, dir string, b Backend, kr Keyring) *Vault {
	t.Helper()
	v, err := Open(Options{Dir: dir, Backend: b, Keyring: kr})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// The key goes to the credential store; the file holds neither the key nor
// a secret in the clear, and another vault on the same directory (another
// process) reads what the first wrote.
func TestVaultKeyInTheStore(t *testing.T) {
	dir := t.TempDir()
	kr := newMem()
	v := open(t, dir, Auto, kr)
	if err := v.Set("oauth/x", "refresh-SECRETVALUE"); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(v.Path())
	if strings.Contains(string(raw), "SECRETVALUE") || !strings.Contains(string(raw), `"key":"keyring"`) {
		t.Fatalf("vault file: %s", raw)
	}
	if _, err := os.Stat(filepath.Join(dir, keyName)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a key file beside a store-keyed vault: %v", err)
	}
	if fi, _ := os.Stat(v.Path()); fi.Mode().Perm() != 0o600 {
		t.Fatalf("vault mode %v", fi.Mode())
	}
	if len(kr.m) != 1 {
		t.Fatalf("store items: %v", kr.m)
	}
	w := open(t, dir, Auto, kr)
	if got, ok, err := w.Get("oauth/x"); err != nil || !ok || got != "refresh-SECRETVALUE" {
		t.Fatalf("second vault: %q %v %v", got, ok, err)
	}
	if err := w.Set("static/gh", "ghp_1"); err != nil {
		t.Fatal(err)
	}
	if got, ok, _ := v.Get("static/gh"); !ok || got != "ghp_1" {
		t.Fatalf("first vault did not see the second's write: %q %v", got, ok)
	}
	names, _ := v.Names()
	if strings.Join(names, ",") != "oauth/x,static/gh" {
		t.Fatalf("names %v", names)
	}
	if err := v.DeletePrefix("oauth/"); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := w.Get("oauth/x"); ok {
		t.Fatal("deleted secret still there")
	}
}

// No store: the key goes to a 0600 file, and the vault says so.
func TestVaultFallsBackToAKeyFile(t *testing.T) {
	dir := t.TempDir()
	kr := newMem()
	kr.down = true
	v := open(t, dir, Auto, kr)
	if err := v.Set("a", "b"); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(dir, keyName))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v %v", fi, err)
	}
	if w := v.Where(); !strings.Contains(w, "key file") {
		t.Fatalf("where: %s", w)
	}
	// The store coming back does not move a file-keyed vault.
	kr.down = false
	w := open(t, dir, Auto, kr)
	if got, _, err := w.Get("a"); err != nil || got != "b" {
		t.Fatalf("%q %v", got, err)
	}
	if len(kr.m) != 0 {
		t.Fatal("a file-keyed vault put its key in the store")
	}
}

// A vault keyed in the store whose store is down is refused, never
// re-keyed into a file (which would lose every secret in it).
func TestVaultStoreDownIsRefusedNotRekeyed(t *testing.T) {
	dir := t.TempDir()
	kr := newMem()
	v := open(t, dir, Auto, kr)
	if err := v.Set("a", "the-secret"); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(v.Path())
	kr.down = true
	w := open(t, dir, Auto, kr)
	_, _, err := w.Get("a")
	if err == nil || !strings.Contains(err.Error(), "credential store") {
		t.Fatalf("get with the store down: %v", err)
	}
	if err := w.Set("b", "c"); err == nil {
		t.Fatal("set with the store down succeeded")
	}
	after, _ := os.ReadFile(v.Path())
	if string(before) != string(after) {
		t.Fatal("the vault file changed while its store was down")
	}
	if strings.Contains(err.Error(), "the-secret") {
		t.Fatal("an error holds a secret")
	}
	kr.down = false
	if got, _, err := w.Get("a"); err != nil || got != "the-secret" {
		t.Fatalf("after the store is back: %q %v", got, err)
	}
}

// Store only: no store, no vault; file only: the store is never asked.
func TestVaultBackends(t *testing.T) {
	kr := newMem()
	kr.down = true
	if err := open(t, t.TempDir(), Store, kr).Set("a", "b"); err == nil {
		t.Fatal("keyring-only vault without a store")
	}
	kr.down = false
	v := open(t, t.TempDir(), File, kr)
	if err := v.Set("a", "b"); err != nil {
		t.Fatal(err)
	}
	if len(kr.m) != 0 {
		t.Fatal("file backend used the store")
	}
	if _, err := Open(Options{Dir: t.TempDir(), Backend: "cloud"}); err == nil {
		t.Fatal("unknown backend accepted")
	}
}

// Bad vault files: each refused with a clear error, none read as empty.
func TestVaultBadFiles(t *testing.T) {
	kr := newMem()
	good := t.TempDir()
	v := open(t, good, Auto, kr)
	v.Set("a", "b")
	raw, _ := os.ReadFile(v.Path())
	for name, content := range map[string]string{
		"not json":       "garbage",
		"wrong version":  `{"version":2,"id":"x","key":"file"}`,
		"edited id":      strings.Replace(string(raw), `"id":"`, `"id":"Z`, 1),
		"edited sealed":  strings.Replace(string(raw), `"sealed":"`, `"sealed":"AAAA`, 1),
		"unknown place":  `{"version":1,"id":"x","key":"cloud"}`,
		"no key in file": `{"version":1,"id":"x","key":"file","nonce":"","sealed":""}`,
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			os.WriteFile(filepath.Join(dir, vaultName), []byte(content), 0o600)
			w := open(t, dir, Auto, kr)
			if _, _, err := w.Get("a"); err == nil {
				t.Fatal("accepted")
			}
			if err := w.Set("a", "c"); err == nil {
				t.Fatal("overwrote a vault it could not open")
			}
		})
	}
	if err := v.Set("", "x"); err == nil {
		t.Fatal("empty name")
	}
	if err := v.Set("a\nb", "x"); err == nil {
		t.Fatal("control character in a name")
	}
}

// Concurrent writers through two vaults (two processes) lose nothing.
func TestVaultConcurrentWriters(t *testing.T) {
	dir := t.TempDir()
	kr := newMem()
	a, b := open(t, dir, File, kr), open(t, dir, File, kr)
	var wg sync.WaitGroup
	for i := 0; i < 20; i++ {
		wg.Add(2)
		go func() { defer wg.Done(); a.Set("a"+string(rune('a'+i)), "x") }()
		go func() { defer wg.Done(); b.Set("b"+string(rune('a'+i)), "y") }()
	}
	wg.Wait()
	names, err := open(t, dir, File, kr).Names()
	if err != nil || len(names) != 40 {
		t.Fatalf("%d names (%v): a write was lost", len(names), err)
	}
}

func TestRefs(t *testing.T) {
	lookup := func(n string) (string, error) {
		if n == "gh" {
			return "ghp_TOKEN", nil
		}
		return "", ErrNoSecret
	}
	for _, c := range []struct{ in, want, err string }{
		{"plain", "plain", ""},
		{"${secret:gh}", "ghp_TOKEN", ""},
		{"Bearer ${secret:gh}", "Bearer ghp_TOKEN", ""},
		{"$${secret:gh}", "${secret:gh}", ""},
		{"${HOME}", "${HOME}", ""},
		{"${secret:gh", "", "no closing"},
		{"${secret:}", "", "names"},
		{"${secret:a b}", "", "names"},
		{"${secret:" + strings.Repeat("x", 129) + "}", "", "names"},
		{"${secret:nope}", "", `secret "nope"`},
	} {
		got, err := Expand(c.in, lookup)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: error %v, want %q", c.in, err, c.err)
			}
			if err != nil && strings.Contains(err.Error(), "ghp_TOKEN") {
				t.Errorf("%q: the error holds the secret", c.in)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%q: %q %v, want %q", c.in, got, err, c.want)
		}
	}
	names, err := Refs("${secret:a}-${secret:b}")
	if err != nil || strings.Join(names, ",") != "a,b" {
		t.Fatalf("refs %v %v", names, err)
	}
	v := open(t, t.TempDir(), File, newMem())
	v.Set(Static("gh"), "ghp_x")
	if got, err := Expand("token ${secret:gh}", v.Lookup); err != nil || got != "token ghp_x" {
		t.Fatalf("%q %v", got, err)
	}
	if _, err := Expand("${secret:other}", v.Lookup); err == nil || !strings.Contains(err.Error(), "hearthd secret set other") {
		t.Fatalf("missing static secret: %v", err)
	}
}

func FuzzExpand(f *testing.F) {
	for _, s := range []string{"", "${secret:a}", "$${", "${secret:", "x${secret:a-b.c_d}y"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out, err := Expand(s, func(string) (string, error) { return "", nil })
		if err == nil && !strings.Contains(s, "${") && out != s {
			t.Fatalf("a value without references changed: %q -> %q", s, out)
		}
	})
}

// A vault directory open to others is narrowed to 0700 before a secret
// goes into it.
func TestVaultDirectoryNarrowed(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	os.Mkdir(dir, 0o755)
	v := open(t, dir, File, newMem())
	if err := v.Set("a", "b"); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(dir); fi.Mode().Perm() != 0o700 {
		t.Fatalf("directory mode %v", fi.Mode().Perm())
	}
}
