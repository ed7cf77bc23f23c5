package hosted

// pipeBuf is how much one write to a pipe puts in whole or not at all
// (PIPE_BUF, 4096 on Linux): a frame up to this size (with its newline)
// written without waiting never leaves half a line in the pipe.
const pipeBuf = 4096
