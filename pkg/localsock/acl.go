// Package sockdir keeps the directory of the daemon's socket, and the
// socket file in it, the user's alone on Windows, where no peer credential
// exists: the access list is the check (docs/decisions/0047-windows-socket.md).
// The daemon creates the directory with a protected access list (Prepare)
// and checks the socket it bound; the shim checks both before it sends a
// byte (Check). What the check accepts is decided by Judge, a pure function
// tested on every system; only reading and writing security descriptors is
// Windows's (sockdir_windows.go).
package localsock

import (
	"fmt"
	"slices"
)

// Well-known SIDs the check trusts besides the user's own.
const (
	// SIDSystem is LocalSystem, the operating system itself.
	SIDSystem = "S-1-5-18"
	// SIDAdministrators is BUILTIN\Administrators: an elevated administrator
	// can take ownership of any file, as root can on Unix, so an entry for
	// them gives nobody anything they could not take.
	SIDAdministrators = "S-1-5-32-544"
	// SIDCreatorOwner stands, in an inheritable entry, for whoever creates
	// a file in the directory: only those the list lets write there.
	SIDCreatorOwner = "S-1-3-0"
)

// SDDL is the security descriptor of a directory hearth creates for its
// socket: owned by the user; a protected list (P: nothing inherited from
// the parent) that gives full control (FA) to the user and to the system,
// inherited by every file and directory created in it (OICI), so the socket
// file gets the same list. Nobody else may open, list or connect.
func SDDL(userSID string) string {
	return "O:" + userSID + "D:P(A;OICI;FA;;;" + userSID + ")(A;OICI;FA;;;" + SIDSystem + ")"
}

// ACE is one entry of an access list, as Judge needs it.
type ACE struct {
	Allow bool   // an entry that grants (any allow type); false: one that denies
	SID   string // whom it names, as S-1-…
	Mask  uint32 // the rights it grants or denies
}

// Descriptor is what Judge reads of a file's security descriptor.
type Descriptor struct {
	Owner   string // the owner's SID
	NoDACL  bool   // no access list at all, or a NULL one: everyone may do everything
	Entries []ACE  // the access list, inherit-only entries included (they reach the socket file)
}

// Judge says why path, described by d, is not private to the user whose
// SIDs are mine (the token's user, and its default owner, which for an
// elevated administrator is Administrators), or nil. Private means: owned by
// one of mine, and no entry grants anything to anyone but mine, the system,
// Administrators or the creator-owner placeholder. Entries that deny only
// narrow access and are never a reason to refuse.
func Judge(path string, d Descriptor, mine []string) error {
	if !slices.Contains(mine, d.Owner) {
		return fmt.Errorf("%s belongs to %s, not to you (%s): another user could read or replace the socket; remove it or choose a directory of your own with MCP_SOCKET_PATH", path, d.Owner, first(mine))
	}
	if d.NoDACL {
		return fmt.Errorf("%s has no access list, so every user may open it: remove it (hearth recreates it for you alone) or choose a directory of your own with MCP_SOCKET_PATH", path)
	}
	for _, e := range d.Entries {
		if !e.Allow || e.Mask == 0 || slices.Contains(mine, e.SID) || trusted(e.SID) {
			continue
		}
		return fmt.Errorf("%s lets %s in (access mask %#x): another user could reach the daemon; remove it (hearth recreates it for you alone) or choose a directory of your own with MCP_SOCKET_PATH", path, e.SID, e.Mask)
	}
	return nil
}

func trusted(sid string) bool {
	switch sid {
	case SIDSystem, SIDAdministrators, SIDCreatorOwner:
		return true
	}
	return false
}

func first(s []string) string {
	if len(s) == 0 {
		return "unknown"
	}
	return s[0]
}
