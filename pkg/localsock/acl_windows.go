//go:build windows

package localsock

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"unsafe"

	"golang.org/x/sys/windows"
)

// PrepareDir makes dir the user's private directory for the socket: created
// with SDDL's protected list when it does not exist (its parents as usual),
// else checked (CheckPrivate), never changed: a directory someone else made or
// opened is refused, not repaired behind their back.
func PrepareDir(dir string) error {
	if err := os.MkdirAll(filepath.Dir(dir), 0o700); err != nil {
		return fmt.Errorf("create %s: %w", filepath.Dir(dir), err)
	}
	user, err := userSID()
	if err != nil {
		return err
	}
	sd, err := windows.SecurityDescriptorFromString(SDDL(user))
	if err != nil {
		return fmt.Errorf("security descriptor %s: %w", SDDL(user), err)
	}
	p, err := windows.UTF16PtrFromString(dir)
	if err != nil {
		return err
	}
	sa := &windows.SecurityAttributes{SecurityDescriptor: sd}
	sa.Length = uint32(unsafe.Sizeof(*sa))
	err = windows.CreateDirectory(p, sa)
	if err != nil && !errors.Is(err, windows.ERROR_ALREADY_EXISTS) {
		return fmt.Errorf("create socket directory %s: %w", dir, err)
	}
	return CheckPrivate(dir)
}

// CheckPrivate says why path (the socket's directory, or the socket) is not the
// user's alone, or nil: see Judge. A directory must be a real one, not a
// link or junction to elsewhere.
func CheckPrivate(path string) error {
	fi, err := os.Lstat(path)
	if err != nil {
		return err
	}
	if fi.Mode()&fs.ModeSymlink != 0 || fi.Mode()&fs.ModeIrregular != 0 {
		return fmt.Errorf("%s is a link or junction, not the directory itself; refusing to use it", path)
	}
	d, err := describe(path)
	if err != nil {
		return fmt.Errorf("read the access list of %s: %w", path, err)
	}
	mine, err := mySIDs()
	if err != nil {
		return err
	}
	return Judge(path, d, mine)
}

// describe reads path's owner and access list through a handle opened on
// path itself, not on what a reparse point (a link, or an AF_UNIX socket,
// which is one) would lead to.
func describe(path string) (Descriptor, error) {
	p, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return Descriptor{}, err
	}
	h, err := windows.CreateFile(p, windows.READ_CONTROL,
		windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE, nil,
		windows.OPEN_EXISTING, windows.FILE_FLAG_OPEN_REPARSE_POINT|windows.FILE_FLAG_BACKUP_SEMANTICS, 0)
	if err != nil {
		return Descriptor{}, err
	}
	defer windows.CloseHandle(h)
	sd, err := windows.GetSecurityInfo(h, windows.SE_FILE_OBJECT,
		windows.OWNER_SECURITY_INFORMATION|windows.DACL_SECURITY_INFORMATION)
	if err != nil {
		return Descriptor{}, err
	}
	owner, _, err := sd.Owner()
	if err != nil {
		return Descriptor{}, err
	}
	d := Descriptor{}
	if owner != nil {
		d.Owner = owner.String()
	}
	dacl, _, err := sd.DACL()
	if errors.Is(err, windows.ERROR_OBJECT_NOT_FOUND) || (err == nil && dacl == nil) {
		d.NoDACL = true
		return d, nil
	}
	if err != nil {
		return Descriptor{}, err
	}
	for i := uint32(0); i < uint32(dacl.AceCount); i++ {
		var ace *windows.ACCESS_ALLOWED_ACE
		if err := windows.GetAce(dacl, i, &ace); err != nil {
			return Descriptor{}, err
		}
		sid := (*windows.SID)(unsafe.Pointer(&ace.SidStart))
		d.Entries = append(d.Entries, ACE{Allow: !denies(ace.Header.AceType), SID: sid.String(), Mask: uint32(ace.Mask)})
	}
	return d, nil
}

// denies: the deny types (plain, object, callback, callback object). Any
// other type is taken as granting, so an unknown one is refused.
func denies(t uint8) bool {
	switch t {
	case windows.ACCESS_DENIED_ACE_TYPE, 0x6, 0xa, 0xc:
		return true
	}
	return false
}

// userSID is the SID of the user this process runs as.
func userSID() (string, error) {
	u, err := windows.GetCurrentProcessToken().GetTokenUser()
	if err != nil {
		return "", fmt.Errorf("read this process's user: %w", err)
	}
	return u.User.Sid.String(), nil
}

// mySIDs: the user, and the owner the token gives what it creates
// (Administrators for an elevated administrator).
func mySIDs() ([]string, error) {
	user, err := userSID()
	if err != nil {
		return nil, err
	}
	mine := []string{user}
	if owner, err := tokenOwner(); err == nil && owner != user {
		mine = append(mine, owner)
	}
	return mine, nil
}

// tokenOwner is the token's default owner (TOKEN_OWNER).
func tokenOwner() (string, error) {
	t := windows.GetCurrentProcessToken()
	n := uint32(64)
	for {
		buf := make([]byte, n)
		err := windows.GetTokenInformation(t, windows.TokenOwner, &buf[0], n, &n)
		if errors.Is(err, windows.ERROR_INSUFFICIENT_BUFFER) {
			continue
		}
		if err != nil {
			return "", err
		}
		return (*struct{ Owner *windows.SID })(unsafe.Pointer(&buf[0])).Owner.String(), nil
	}
}
