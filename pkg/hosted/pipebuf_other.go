//go:build !linux

package hosted

// pipeBuf is how much one write to a pipe puts in whole or not at all: 512
// on macOS and the BSDs, the POSIX minimum (_POSIX_PIPE_BUF), so taken
// wherever the system's own is not known. A frame up to this size (with its
// newline) written without waiting never leaves half a line in the pipe;
// larger ones go through the writer that waits.
const pipeBuf = 512
