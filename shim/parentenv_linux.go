package shim

import (
	"bytes"
	"os"
	"strconv"
)

func init() { parentEnv = procEnviron }

// procEnviron, the system's parentEnv, is the environment the shim's parent
// (the client) started with, from /proc. A parent that changed its
// environment after it started shows the change as set by the entry; the
// only cost is a separate instance.
func procEnviron() ([]string, bool) {
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(os.Getppid()) + "/environ")
	if err != nil {
		return nil, false
	}
	var out []string
	for _, kv := range bytes.Split(raw, []byte{0}) {
		if len(kv) > 0 {
			out = append(out, string(kv))
		}
	}
	return out, true
}
