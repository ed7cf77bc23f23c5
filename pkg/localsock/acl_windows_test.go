//go:build windows

package localsock

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/windows"
)

// PrepareDir makes a directory that CheckPrivate accepts, and a file created in it
// inherits its list, so that the socket file passes too.
func TestPrepareMakesAPrivateDirectory(t *testing.T) {
	skipUnderWine(t)
	dir := filepath.Join(t.TempDir(), "hearth")
	if err := PrepareDir(dir); err != nil {
		t.Fatal(err)
	}
	if err := PrepareDir(dir); err != nil {
		t.Fatalf("again, on the existing directory: %v", err)
	}
	f := filepath.Join(dir, "hearthd.sock")
	if err := os.WriteFile(f, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := CheckPrivate(f); err != nil {
		t.Fatalf("a file created in it: %v", err)
	}
}

// A directory that grants anyone else access is refused, by PrepareDir too,
// and left as it is.
func TestADirectoryOpenToOthersIsRefused(t *testing.T) {
	skipUnderWine(t)
	user, err := userSID()
	if err != nil {
		t.Fatal(err)
	}
	for name, sddl := range map[string]string{
		"everyone may read": "O:" + user + "D:P(A;OICI;FA;;;" + user + ")(A;OICI;FR;;;WD)",
		"users may write":   "O:" + user + "D:P(A;OICI;FA;;;" + user + ")(A;OICI;FW;;;BU)",
	} {
		dir := filepath.Join(t.TempDir(), "hearth")
		sd, err := windows.SecurityDescriptorFromString(sddl)
		if err != nil {
			t.Fatal(err)
		}
		sa := &windows.SecurityAttributes{SecurityDescriptor: sd}
		sa.Length = uint32(unsafe.Sizeof(*sa))
		if err := windows.CreateDirectory(windows.StringToUTF16Ptr(dir), sa); err != nil {
			t.Fatal(err)
		}
		if err := CheckPrivate(dir); err == nil {
			t.Errorf("%s: Check accepted %s", name, sddl)
		}
		if err := PrepareDir(dir); err == nil || !strings.Contains(err.Error(), dir) {
			t.Errorf("%s: Prepare: %v, want a refusal naming the directory", name, err)
		}
	}
}

// skipUnderWine: Wine 8 keeps no access lists on files; it makes one up
// from the Unix mode bits (the owner, and Everyone for the bits of
// others), so an entry for Users is lost and a new file inherits nothing
// (docs/development.md). These tests are Windows's.
func skipUnderWine(t *testing.T) {
	if windows.NewLazySystemDLL("ntdll.dll").NewProc("wine_get_version").Find() == nil {
		t.Skip("Wine emulates access lists from Unix modes; this needs Windows")
	}
}
