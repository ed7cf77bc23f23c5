//go:build !unix

package hosted

import "syscall"

// rawWrite never writes without waiting here: TryWrite then leaves every
// frame to Write.
func rawWrite(uintptr, []byte) (int, error) { return 0, syscall.EAGAIN }
