package proctable

import "unicode/utf16"

// envBlock splits a Windows environment block, UTF-16 strings each ended by
// a NUL and the block by an empty one, into its NAME=VALUE strings
// (proctable_windows.go's Env). Portable so that it is tested on Linux.
func envBlock(b []uint16) []string {
	var out []string
	for len(b) > 0 {
		i := 0
		for i < len(b) && b[i] != 0 {
			i++
		}
		if i == 0 {
			break
		}
		out = append(out, string(utf16.Decode(b[:i])))
		if i == len(b) {
			break
		}
		b = b[i+1:]
	}
	return out
}
