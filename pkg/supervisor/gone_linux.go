package supervisor

import (
	"os"
	"strconv"
	"strings"
	"syscall"
)

// groupRunning reports whether any process of the group is still alive.
// kill(-pgid, 0) also counts zombies (dead, waiting for their new parent to
// reap them), so when it says yes, /proc tells the dead from the living.
func groupRunning(pgid int) bool {
	if err := syscall.Kill(-pgid, 0); err != nil {
		return false // ESRCH: nobody left
	}
	want := strconv.Itoa(pgid)
	dir, err := os.Open("/proc")
	if err != nil {
		return true
	}
	defer dir.Close()
	names, _ := dir.Readdirnames(-1)
	for _, n := range names {
		if n[0] < '0' || n[0] > '9' {
			continue
		}
		stat, err := os.ReadFile("/proc/" + n + "/stat")
		if err != nil {
			continue
		}
		s := string(stat)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) > 2 && f[2] == want && f[0] != "Z" && f[0] != "X" {
			return true
		}
	}
	return false
}
