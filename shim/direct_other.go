//go:build !linux

package shim

// Descriptor passing (decision 0020) needs Linux's memfd; elsewhere the
// shim relays frames.

type directState struct{ attached bool }

type attachResult int

const (
	attached attachResult = iota
	refused
	failed
)

func (s *Shim) prepareDirect() bool { return false }

func (s *Shim) attachDirect(c *conn, owed *[]owedReq) attachResult { return refused }

func (s *Shim) takeBack() {}
