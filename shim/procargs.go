package shim

import (
	"bytes"
	"encoding/binary"
)

// parseProcArgs reads the environment out of macOS's kern.procargs2 record
// of a process (parentenv_darwin.go): a 32-bit argc in the machine's byte
// order (little-endian on every Mac Go builds for), the executable's path,
// NUL padding, argc NUL-terminated arguments, then the environment's
// NUL-terminated strings up to an empty one (what follows, the "apple"
// strings, is not environment). It is portable so that it is tested on
// Linux. false: the record is cut short.
func parseProcArgs(b []byte) ([]string, bool) {
	if len(b) < 4 {
		return nil, false
	}
	argc := int(binary.LittleEndian.Uint32(b))
	b = b[4:]
	i := bytes.IndexByte(b, 0)
	if i < 0 {
		return nil, false
	}
	b = b[i:]
	for len(b) > 0 && b[0] == 0 {
		b = b[1:]
	}
	for range argc {
		i := bytes.IndexByte(b, 0)
		if i < 0 {
			return nil, false
		}
		b = b[i+1:]
	}
	var env []string
	for len(b) > 0 {
		i := bytes.IndexByte(b, 0)
		if i <= 0 {
			break // the empty string that ends the environment, or no end at all
		}
		env = append(env, string(b[:i]))
		b = b[i+1:]
	}
	return env, true
}
