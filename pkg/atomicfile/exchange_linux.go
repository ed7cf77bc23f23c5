package atomicfile

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

func init() { exchangeNames = swapNames }

// swapNames swaps a and b with renameat2(RENAME_EXCHANGE). A file
// system that cannot (EINVAL) or a kernel before 3.15 (ENOSYS) makes it
// errNoExchange.
func swapNames(a, b string) error {
	err := unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE)
	if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EOPNOTSUPP) {
		return errNoExchange
	}
	if err != nil {
		return &os.LinkError{Op: "exchange", Old: a, New: b, Err: err}
	}
	return nil
}
