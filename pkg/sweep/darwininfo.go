package sweep

import "encoding/binary"

// macOS's descriptor records from proc_info (scan_darwin.go), read here so
// that the reading is tested on Linux. Both begin with a struct
// proc_fileinfo (24 bytes) and a struct vinfo_stat (136 bytes), whose
// vst_ino (at 8 in it) names the pipe or socket.
const (
	darwinFileInfo = 24
	darwinStatSize = 136
	darwinInoAt    = darwinFileInfo + 8
	// struct pipe_info, after its vinfo_stat: pipe_handle, pipe_peerhandle
	// (uint64 each), pipe_status (int).
	darwinPipeHandleAt = darwinFileInfo + darwinStatSize
	darwinPipePeerAt   = darwinPipeHandleAt + 8
	darwinPipeStatusAt = darwinPipePeerAt + 8
	darwinPipeEOF      = 0x0040 // sys/pipe.h's PIPE_EOF: the other end closed
	// struct socket_info, after its vinfo_stat: soi_so, soi_pcb (uint64),
	// soi_type, soi_protocol, soi_family (int), soi_options, soi_linger,
	// soi_state (short).
	darwinSockFamilyAt  = darwinFileInfo + darwinStatSize + 16 + 8
	darwinSockStateAt   = darwinFileInfo + darwinStatSize + 16 + 12 + 4
	darwinSSCantRcvMore = 0x0020 // sys/socketvar.h's SS_CANTRCVMORE
	darwinAFUnix        = 1
)

// darwinPipe reads a struct pipe_fdinfo: the pipe, and whether its writer
// is gone (no peer, or the end of file marked).
func darwinPipe(b []byte) (Stream, bool) {
	if len(b) < darwinPipeStatusAt+4 {
		return Stream{}, false
	}
	le := binary.LittleEndian
	peer := le.Uint64(b[darwinPipePeerAt:])
	status := le.Uint32(b[darwinPipeStatusAt:])
	return Stream{Kind: "pipe", ID: le.Uint64(b[darwinPipeHandleAt:]), Closed: peer == 0 || status&darwinPipeEOF != 0}, true
}

// darwinSocket reads a struct socket_fdinfo: the socket, and whether it
// can receive more; a socket of another family than AF_UNIX is not one a
// client hands a server's stdin as.
func darwinSocket(b []byte) (Stream, bool) {
	if len(b) < darwinSockStateAt+2 {
		return Stream{}, false
	}
	le := binary.LittleEndian
	if le.Uint32(b[darwinSockFamilyAt:]) != darwinAFUnix {
		return Stream{}, false
	}
	state := le.Uint16(b[darwinSockStateAt:])
	return Stream{Kind: "socket", ID: le.Uint64(b[darwinInoAt:]), Closed: state&darwinSSCantRcvMore != 0}, true
}
