//go:build linux

package secret

import (
	"testing"

	"github.com/hearth-mcp/hearth/pkg/safefile/safefiletest"
)

// The bad-input table of hearth's own files, for the vault: a vault file of
// any hostile class (a FIFO, a link, another user's, one too large, ...)
// is refused at once, never waited on nor believed.
func TestHostileVaultFilesAreRefused(t *testing.T) {
	for _, class := range safefiletest.Classes {
		t.Run(class, func(t *testing.T) {
			dir := t.TempDir()
			if !safefiletest.HostileAt(t, dir, vaultName, class, []byte(`{"version":1,"id":"x","key":"file","nonce":"","sealed":""}`), maxVault) {
				t.Skipf("no %s made here", class)
			}
			v, err := Open(Options{Dir: dir, Backend: File, Keyring: newMem()})
			if err != nil {
				t.Fatal(err)
			}
			safefiletest.Prompt(t, "Get", func() {
				if _, _, err := v.Get("x"); err == nil {
					t.Errorf("a vault of class %q was read", class)
				}
			})
		})
	}
}
