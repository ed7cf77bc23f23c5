package proctable

import "encoding/binary"

// taskInfo reads macOS's struct proc_taskinfo (proctable_darwin.go's
// Details): its second to fourth uint64s, resident size, total user time and
// total system time, little-endian. Portable so that it is tested on Linux.
func taskInfo(b []byte) (rss, user, sys uint64) {
	if len(b) < 32 {
		return 0, 0, 0
	}
	return binary.LittleEndian.Uint64(b[8:]), binary.LittleEndian.Uint64(b[16:]), binary.LittleEndian.Uint64(b[24:])
}
