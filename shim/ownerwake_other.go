//go:build !linux

package shim

import "time"

// ownerWatch: no watch on this system; the shim looks every ownerPoll.
type ownerWatch struct{}

func (o *ownerWatch) open(string) bool        { return false }
func (o *ownerWatch) wait(time.Duration) bool { return false }
func (o *ownerWatch) close()                  {}
