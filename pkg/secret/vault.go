// Package secret keeps hearth's secrets at rest: OAuth grants and client
// credentials, and the static secrets a server's entry names in its env or
// headers. They are sealed (AES-256-GCM) in one file of the state
// directory, whose key lives in the system's credential store (the Secret
// Service over D-Bus on Linux, the Keychain on macOS, the Credential
// Manager on Windows), so the file alone, in a backup or read by another
// program, gives nothing away. Where no credential store runs, the key is
// kept in a 0600 file beside the vault instead, and the secrets are then
// protected by file permissions only: the file says which, and a vault
// whose key is in the store is never re-keyed into a file because the store
// is unreachable for a while (docs/decisions/0061-where-secrets-live.md).
//
// A secret's value is never part of an error, a log line or a status: the
// package's errors name the secret and the place, not what it holds.
package secret

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/hearth-mcp/hearth/pkg/atomicfile"
	"github.com/hearth-mcp/hearth/pkg/endpoint"
)

// Backend says where a vault's key is kept.
type Backend string

const (
	// Auto: the credential store when one answers, else a key file (for a
	// new vault); an existing vault keeps the place its file names.
	Auto Backend = "auto"
	// Store: the system's credential store only; a vault cannot be opened
	// without it.
	Store Backend = "keyring"
	// File: a 0600 key file beside the vault, never the credential store.
	File Backend = "file"
)

// Keyring is the credential store as the vault uses it: one item per
// vault, holding its key. System is the system's; tests pass their own.
type Keyring interface {
	Get(service, user string) (string, error)
	Set(service, user, value string) error
	Delete(service, user string) error
}

// ErrNotFound is what a Keyring returns for an item it does not hold.
var ErrNotFound = errors.New("not in the credential store")

// Options open a vault.
type Options struct {
	// Dir is the directory of the vault's files (the state directory),
	// created 0700 if missing.
	Dir string
	// Backend is where the key of a new vault goes ("" is Auto).
	Backend Backend
	// Keyring is the credential store (nil: the system's).
	Keyring Keyring
}

// Vault is a sealed set of named secrets. It is safe for concurrent use,
// and several processes may share one: every change is made under a lock
// file and re-reads the file first, and a read notices another process's
// change by the file's size and time.
type Vault struct {
	dir     string
	keyring Keyring
	backend Backend

	mu     sync.Mutex
	key    []byte // nil until the first use
	header header
	data   map[string]string
	stamp  fileStamp // of the vault file when data was read
}

// The files of a vault, in Options.Dir.
const (
	vaultName = "secrets.vault"
	keyName   = "secrets.key"
	lockName  = "secrets.lock"
	// service is the credential store's service name for hearth's items.
	service = "hearth"
)

// header is the vault file's clear part: which vault, where its key is.
type header struct {
	Version int    `json:"version"`
	ID      string `json:"id"`
	Key     string `json:"key"` // "keyring" or "file"
	Nonce   string `json:"nonce"`
	Sealed  string `json:"sealed"`
}

type fileStamp struct {
	size int64
	mod  time.Time
}

// Open prepares the vault in o.Dir; it reads nothing yet (the credential
// store is asked on first use, so a daemon starts without waiting for it).
func Open(o Options) (*Vault, error) {
	if o.Dir == "" {
		return nil, errors.New("secret: no directory for the vault")
	}
	b := o.Backend
	if b == "" {
		b = Auto
	}
	switch b {
	case Auto, Store, File:
	default:
		return nil, fmt.Errorf("secret: unknown place for secrets %q (auto, keyring or file)", b)
	}
	kr := o.Keyring
	if kr == nil {
		kr = System()
	}
	return &Vault{dir: o.Dir, keyring: kr, backend: b}, nil
}

// Path is the vault file's path.
func (v *Vault) Path() string { return filepath.Join(v.dir, vaultName) }

// Where says where the vault's key is (for status: never a secret).
func (v *Vault) Where() string {
	v.mu.Lock()
	defer v.mu.Unlock()
	if err := v.load(); err != nil {
		return "unavailable: " + err.Error()
	}
	return v.where()
}

func (v *Vault) where() string {
	if v.header.Key == "file" {
		return "a key file (" + filepath.Join(v.dir, keyName) + "; no credential store)"
	}
	return "the system's credential store (" + storeName + ")"
}

// Get returns the secret called name; ok is false when there is none.
func (v *Vault) Get(name string) (value string, ok bool, err error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if err := v.load(); err != nil {
		return "", false, err
	}
	value, ok = v.data[name]
	return value, ok, nil
}

// Names lists the secrets held, sorted.
func (v *Vault) Names() ([]string, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if err := v.load(); err != nil {
		return nil, err
	}
	out := make([]string, 0, len(v.data))
	for n := range v.data {
		out = append(out, n)
	}
	sort.Strings(out)
	return out, nil
}

// Set stores value under name.
func (v *Vault) Set(name, value string) error {
	if err := checkName(name); err != nil {
		return err
	}
	return v.change(func(m map[string]string) bool {
		if old, ok := m[name]; ok && old == value {
			return false
		}
		m[name] = value
		return true
	})
}

// Delete forgets the secret called name (nothing when there is none).
func (v *Vault) Delete(name string) error {
	return v.change(func(m map[string]string) bool {
		if _, ok := m[name]; !ok {
			return false
		}
		delete(m, name)
		return true
	})
}

// DeletePrefix forgets every secret whose name starts with prefix.
func (v *Vault) DeletePrefix(prefix string) error {
	return v.change(func(m map[string]string) bool {
		changed := false
		for n := range m {
			if strings.HasPrefix(n, prefix) {
				delete(m, n)
				changed = true
			}
		}
		return changed
	})
}

// checkName refuses a name that could not be told apart in a listing.
func checkName(name string) error {
	if name == "" || len(name) > 512 {
		return errors.New("secret: a secret's name must be 1 to 512 bytes")
	}
	for _, r := range name {
		if r < 0x20 || r == 0x7f {
			return fmt.Errorf("secret: the name %q holds a control character", name)
		}
	}
	return nil
}

// change applies edit to the secrets under the vault's lock, after reading
// the file again, and writes them back if edit says it changed them.
func (v *Vault) change(edit func(map[string]string) bool) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	// The directory is the user's alone (created 0700, narrowed if open,
	// refused if another user's), whatever the files' own modes.
	if _, err := endpoint.PrivateDir(v.dir); err != nil {
		return fmt.Errorf("secret: %w", err)
	}
	unlock, err := lockFile(filepath.Join(v.dir, lockName))
	if err != nil {
		return fmt.Errorf("secret: lock the vault in %s: %w", v.dir, err)
	}
	defer unlock()
	v.stamp = fileStamp{} // read it again whatever the stamp says: another process may have written within the clock's tick
	if err := v.load(); err != nil {
		return err
	}
	if v.key == nil {
		if err := v.create(); err != nil {
			return err
		}
	}
	m := make(map[string]string, len(v.data)+1)
	for k, x := range v.data {
		m[k] = x
	}
	if !edit(m) {
		return nil
	}
	if err := v.write(m); err != nil {
		return err
	}
	v.data = m
	return nil
}

// load reads the vault file if it changed since it was read; v.mu is held.
// A missing file is an empty vault with no key yet.
func (v *Vault) load() error {
	path := v.Path()
	fi, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		v.key, v.header, v.stamp = nil, header{}, fileStamp{}
		v.data = map[string]string{}
		return nil
	}
	if err != nil {
		return fmt.Errorf("secret: %w", err)
	}
	st := fileStamp{size: fi.Size(), mod: fi.ModTime()}
	if v.data != nil && st == v.stamp && v.key != nil {
		return nil
	}
	raw, err := readSmall(path, maxVault)
	if err != nil {
		return fmt.Errorf("secret: read %s: %w", path, err)
	}
	var h header
	if err := json.Unmarshal(raw, &h); err != nil || h.Version != 1 || h.ID == "" {
		return fmt.Errorf("secret: %s is not a hearth vault (version 1): move it away to start an empty one", path)
	}
	key := v.key
	if key == nil || h.ID != v.header.ID || h.Key != v.header.Key {
		if key, err = v.fetchKey(h); err != nil {
			return err
		}
	}
	data, err := unseal(key, h)
	if err != nil {
		return fmt.Errorf("secret: %s cannot be opened with its key from %s (%v): the key was replaced or the file damaged", path, placeOf(h.Key), err)
	}
	v.key, v.header, v.data, v.stamp = key, h, data, st
	return nil
}

func placeOf(k string) string {
	if k == "file" {
		return keyName
	}
	return "the credential store"
}

// fetchKey reads the key of the vault h describes from where it says.
func (v *Vault) fetchKey(h header) ([]byte, error) {
	var text string
	switch h.Key {
	case "file":
		raw, err := readSmall(filepath.Join(v.dir, keyName), 4096)
		if err != nil {
			return nil, fmt.Errorf("secret: the vault's key file: %w", err)
		}
		text = strings.TrimSpace(string(raw))
	case "keyring":
		if v.backend == File {
			return nil, fmt.Errorf("secret: the vault in %s keeps its key in the credential store, and secrets are set to a file only", v.dir)
		}
		var err error
		text, err = v.keyring.Get(service, "vault/"+h.ID)
		if err != nil {
			return nil, fmt.Errorf("secret: the vault's key is in the credential store (%s), which did not give it: %v; "+
				"the vault is left as it is until the store answers", storeName, err)
		}
	default:
		return nil, fmt.Errorf("secret: the vault in %s names an unknown key place %q", v.dir, h.Key)
	}
	key, err := base64.StdEncoding.DecodeString(text)
	if err != nil || len(key) != 32 {
		return nil, fmt.Errorf("secret: the vault's key from %s is malformed", placeOf(h.Key))
	}
	return key, nil
}

// create makes a new vault's key and puts it where the backend says; v.mu
// is held and no vault file exists.
func (v *Vault) create() error {
	key := make([]byte, 32)
	rand.Read(key)
	id := randomID()
	enc := base64.StdEncoding.EncodeToString(key)
	place := "file"
	if v.backend != File {
		err := v.keyring.Set(service, "vault/"+id, enc)
		switch {
		case err == nil:
			place = "keyring"
		case v.backend == Store:
			return fmt.Errorf("secret: the credential store (%s) did not take the vault's key: %v", storeName, err)
		}
	}
	if place == "file" {
		if err := atomicfile.Write(filepath.Join(v.dir, keyName), []byte(enc+"\n"), 0o600); err != nil {
			return fmt.Errorf("secret: %w", err)
		}
	}
	v.key = key
	v.header = header{Version: 1, ID: id, Key: place}
	return nil
}

// write seals m and replaces the vault file; v.mu and the lock are held.
func (v *Vault) write(m map[string]string) error {
	h, err := seal(v.key, v.header, m)
	if err != nil {
		return err
	}
	raw, _ := json.Marshal(h)
	if err := atomicfile.Write(v.Path(), raw, 0o600); err != nil {
		return fmt.Errorf("secret: %w", err)
	}
	v.header = h
	if fi, err := os.Stat(v.Path()); err == nil {
		v.stamp = fileStamp{size: fi.Size(), mod: fi.ModTime()}
	}
	return nil
}

// maxVault bounds the vault file read (thousands of grants fit).
const maxVault = 16 << 20

func seal(key []byte, h header, m map[string]string) (header, error) {
	plain, err := json.Marshal(m)
	if err != nil {
		return h, err
	}
	aead, err := gcm(key)
	if err != nil {
		return h, err
	}
	nonce := make([]byte, aead.NonceSize())
	rand.Read(nonce)
	// The clear header is bound to the sealed data: a file whose id or key
	// place was edited does not open.
	sealed := aead.Seal(nil, nonce, plain, []byte(h.ID+"\x00"+h.Key))
	h.Nonce = base64.StdEncoding.EncodeToString(nonce)
	h.Sealed = base64.StdEncoding.EncodeToString(sealed)
	return h, nil
}

func unseal(key []byte, h header) (map[string]string, error) {
	aead, err := gcm(key)
	if err != nil {
		return nil, err
	}
	nonce, err1 := base64.StdEncoding.DecodeString(h.Nonce)
	sealed, err2 := base64.StdEncoding.DecodeString(h.Sealed)
	if err1 != nil || err2 != nil || len(nonce) != aead.NonceSize() {
		return nil, errors.New("malformed")
	}
	plain, err := aead.Open(nil, nonce, sealed, []byte(h.ID+"\x00"+h.Key))
	if err != nil {
		return nil, errors.New("authentication failed")
	}
	m := map[string]string{}
	if err := json.Unmarshal(plain, &m); err != nil {
		return nil, errors.New("malformed content")
	}
	return m, nil
}

func gcm(key []byte) (cipher.AEAD, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

func randomID() string {
	b := make([]byte, 12)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// readSmall reads a file of at most limit bytes.
func readSmall(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	if fi.Size() > limit {
		return nil, fmt.Errorf("%s is larger than %d bytes", path, limit)
	}
	buf := make([]byte, fi.Size())
	n, err := f.Read(buf)
	if err != nil && n != len(buf) {
		return nil, err
	}
	return buf[:n], nil
}
