package hosted

import "runtime"

// pipeBuf is how much one write to a pipe puts in whole or not at all
// (PIPE_BUF): 4096 on Linux; 512 on macOS and the BSDs, the POSIX minimum
// (_POSIX_PIPE_BUF), so taken wherever the system's own is not known. A
// frame up to this size (with its newline) written without waiting never
// leaves half a line in the pipe; larger ones go through the writer that
// waits.
var pipeBuf = pipeBufOn(runtime.GOOS)

func pipeBufOn(goos string) int {
	if goos == "linux" {
		return 4096
	}
	return 512
}
