package atomicfile

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

func init() { exchangeNames = swapNames }

// swapNames swaps a and b with renamex_np(RENAME_SWAP). A file system
// that cannot (ENOTSUP, EINVAL) makes it errNoExchange.
func swapNames(a, b string) error {
	err := unix.RenamexNp(a, b, unix.RENAME_SWAP)
	if errors.Is(err, unix.ENOTSUP) || errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) {
		return errNoExchange
	}
	if err != nil {
		return &os.LinkError{Op: "exchange", Old: a, New: b, Err: err}
	}
	return nil
}
