package localsock

import (
	"strings"
	"testing"
)

const (
	me    = "S-1-5-21-1-2-3-1001"
	other = "S-1-5-21-1-2-3-1002"
	users = "S-1-5-32-545"
	world = "S-1-1-0"
)

func TestSDDL(t *testing.T) {
	got := SDDL(me)
	want := "O:" + me + "D:P(A;OICI;FA;;;" + me + ")(A;OICI;FA;;;S-1-5-18)"
	if got != want {
		t.Fatalf("SDDL = %q, want %q", got, want)
	}
}

// Every descriptor the socket's directory or file may have, and whether the
// daemon and the shim accept it.
func TestJudge(t *testing.T) {
	mine := []string{me}
	elevated := []string{me, SIDAdministrators}
	full := uint32(0x1f01ff)
	for _, c := range []struct {
		name string
		d    Descriptor
		mine []string
		bad  string // a word the refusal must carry; "" when accepted
	}{
		{"as hearth creates it", Descriptor{Owner: me, Entries: []ACE{{true, me, full}, {true, SIDSystem, full}}}, mine, ""},
		{"a profile's inherited list", Descriptor{Owner: me, Entries: []ACE{{true, SIDSystem, full}, {true, SIDAdministrators, full}, {true, me, full}}}, mine, ""},
		{"created elevated: owned by Administrators", Descriptor{Owner: SIDAdministrators, Entries: []ACE{{true, me, full}}}, elevated, ""},
		{"owned by Administrators, not elevated", Descriptor{Owner: SIDAdministrators, Entries: []ACE{{true, me, full}}}, mine, "belongs to " + SIDAdministrators},
		{"another user's", Descriptor{Owner: other, Entries: []ACE{{true, other, full}}}, mine, "belongs to " + other},
		{"the system's", Descriptor{Owner: SIDSystem, Entries: []ACE{{true, me, full}}}, mine, "not to you"},
		{"a NULL list", Descriptor{Owner: me, NoDACL: true}, mine, "no access list"},
		{"an empty list", Descriptor{Owner: me}, mine, ""},
		{"Users may read", Descriptor{Owner: me, Entries: []ACE{{true, me, full}, {true, users, 0x1200a9}}}, mine, users},
		{"Everyone", Descriptor{Owner: me, Entries: []ACE{{true, world, full}}}, mine, world},
		{"another user, by name", Descriptor{Owner: me, Entries: []ACE{{true, me, full}, {true, other, 0x1}}}, mine, other},
		{"a deny for Everyone", Descriptor{Owner: me, Entries: []ACE{{false, world, full}, {true, me, full}}}, mine, ""},
		{"an entry that grants nothing", Descriptor{Owner: me, Entries: []ACE{{true, world, 0}}}, mine, ""},
		{"creator owner", Descriptor{Owner: me, Entries: []ACE{{true, me, full}, {true, SIDCreatorOwner, full}}}, mine, ""},
		{"no SIDs known", Descriptor{Owner: me}, nil, "not to you (unknown)"},
	} {
		err := Judge(`C:\Users\me\AppData\Local\hearth`, c.d, c.mine)
		switch {
		case c.bad == "" && err != nil:
			t.Errorf("%s: refused: %v", c.name, err)
		case c.bad != "" && err == nil:
			t.Errorf("%s: accepted, want a refusal naming %q", c.name, c.bad)
		case c.bad != "" && !strings.Contains(err.Error(), c.bad):
			t.Errorf("%s: %v: does not say %q", c.name, err, c.bad)
		case err != nil && !strings.Contains(err.Error(), `C:\Users\me\AppData\Local\hearth`):
			t.Errorf("%s: %v: does not name the path", c.name, err)
		}
	}
}
