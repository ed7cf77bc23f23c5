//go:build unix

package hosted

import "syscall"

func rawWrite(fd uintptr, b []byte) (int, error) { return syscall.Write(int(fd), b) }
