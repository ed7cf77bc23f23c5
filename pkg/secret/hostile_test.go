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
			made := safefiletest.Hostile(t, dir, func(c string) string {
				if c == class {
					return vaultName
				}
				return "other-" + c
			}, func(string) []byte { return []byte(`{"version":1,"id":"x","key":"file","nonce":"","sealed":""}`) }, maxVault)
			if made[vaultName] != class {
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
