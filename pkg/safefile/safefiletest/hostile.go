package safefiletest

import (
	"strings"
	"testing"
)

// The classes of hostile file Hostile makes where hearth keeps its own files
// (safefile.OpenOwn's rule refuses each).
const (
	ClassFIFO      = "FIFO"
	ClassSocket    = "socket"
	ClassDevice    = "device"
	ClassLinkDev   = "link to a device"
	ClassLinkFIFO  = "link to a FIFO"
	ClassLinkOut   = "planted link"
	ClassForeign   = "another user's"
	ClassWritable  = "writable by others"
	ClassTooLarge  = "larger than the limit"
	ClassDirectory = "directory"
)

// Classes are every class, in order.
var Classes = []string{ClassFIFO, ClassSocket, ClassDevice, ClassLinkDev, ClassLinkFIFO, ClassLinkOut,
	ClassForeign, ClassWritable, ClassTooLarge, ClassDirectory}

// ForeignUID is the owner of the ClassForeign file: nobody's.
const ForeignUID = 65534

// Hostile makes, in the directory dir, one file of every class above that
// this system and privilege allow (a device node and another user's file
// need root; the rest is logged and left out), each named name(class). The
// files that could be read hold content(their name) (a planted link names
// a file of it outside dir; another user's and the writable one hold it),
// so that only their class is wrong; the ClassTooLarge file is its content
// followed by zeros to limit+1 bytes (sparse). It returns the classes made,
// by name.
func Hostile(tb testing.TB, dir string, name func(class string) string, content func(name string) []byte, limit int64) map[string]string {
	tb.Helper()
	return hostile(tb, dir, name, content, limit)
}

// HostileAt makes in dir, at name, the one hostile file of class (the other
// classes are made beside it under other names), holding content as
// Hostile says; it reports false when this system cannot make that class.
func HostileAt(tb testing.TB, dir, name, class string, content []byte, limit int64) bool {
	tb.Helper()
	made := hostile(tb, dir, func(c string) string {
		if c == class {
			return name
		}
		return "other-" + strings.ReplaceAll(c, " ", "-")
	}, func(string) []byte { return content }, limit)
	return made[name] == class
}

// hostile makes the table's hostile files in dir where the system can
// (hostile_linux.go sets it); elsewhere none, and says so.
var hostile = func(tb testing.TB, dir string, _ func(string) string, _ func(string) []byte, _ int64) map[string]string {
	tb.Logf("no hostile files made in %s on this system", dir)
	return nil
}
