//go:build windows

package main

import (
	"errors"
	"os"

	"golang.org/x/sys/windows"
)

func init() { alive = handleAlive }

// handleAlive, Windows's alive, says whether p still runs: its process
// object is not yet signalled.
// Windows has no signal 0 (os.Process.Signal sends only Kill); p's own
// handle, held since os.FindProcess, keeps the pid from naming another
// process once this one exits, so opening it again finds this one.
func handleAlive(p *os.Process) bool {
	h, err := windows.OpenProcess(windows.SYNCHRONIZE, false, uint32(p.Pid))
	if err != nil {
		// Gone; one of another user's would be denied, and runs.
		return errors.Is(err, windows.ERROR_ACCESS_DENIED)
	}
	defer windows.CloseHandle(h)
	ev, err := windows.WaitForSingleObject(h, 0)
	return err == nil && ev == uint32(windows.WAIT_TIMEOUT)
}
