// Package owner makes exactly one process the owner of a data directory
// (HEARTH_HOME): the one that opens its stores. The owner holds an exclusive
// lock in the directory for its whole life and records there where it serves,
// so every shim, `hearthd serve` and `hearthd stdio` that resolves the same
// directory finds it, whatever socket its own environment would have chosen
// (docs/decisions/0015-one-owner-per-home.md).
//
// Both files have dot names, which the version guard treats as its own and
// never as data.
package owner

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// File names inside the data directory.
const (
	// LockName is flocked exclusively by the owner for its whole life; it
	// holds the owner's pid, written as soon as the lock is taken.
	LockName = ".owner.lock"
	// RecordName is the owner's Record, replaced atomically.
	RecordName = ".owner"
)

// Record says who owns a data directory and where it serves.
type Record struct {
	PID     int       `json:"pid"`
	Mode    string    `json:"mode"`             // "socket" (hearthd serve) or "stdio" (hearthd stdio)
	Socket  string    `json:"socket,omitempty"` // where clients attach; "" when it serves none
	Version string    `json:"version"`          // the owner's hearthd version
	Started time.Time `json:"started"`
	Home    string    `json:"home"`
	// Ready is the readiness file the owner wrote ("" when none), so that
	// a successor can remove it if the owner died without doing so.
	Ready string `json:"ready,omitempty"`
}

// State is what Find learned about a data directory.
type State int

const (
	// None: nobody owns the directory.
	None State = iota
	// Starting: an owner holds the lock but has not said where it serves yet.
	Starting
	// Serving: the owner's Record is current.
	Serving
)

func (s State) String() string {
	switch s {
	case Starting:
		return "starting"
	case Serving:
		return "serving"
	}
	return "none"
}

// HeldError is Acquire's refusal: another live process owns the directory.
type HeldError struct {
	Home   string
	State  State
	Record Record // Record.PID is set even while the owner is Starting
}

func (e *HeldError) Error() string {
	r := e.Record
	switch {
	case e.State == Starting:
		return fmt.Sprintf("the data directory %s is owned by hearthd (pid %d), which is still starting", e.Home, r.PID)
	case r.Socket != "":
		return fmt.Sprintf("the data directory %s is owned by hearthd %s (pid %d, version %s), serving the socket %s", e.Home, r.Mode, r.PID, r.Version, r.Socket)
	default:
		return fmt.Sprintf("the data directory %s is owned by hearthd %s (pid %d, version %s), which serves no socket", e.Home, r.Mode, r.PID, r.Version)
	}
}

// ErrHeld matches a *HeldError with errors.Is.
var ErrHeld = errors.New("the data directory has another owner")

// Is makes errors.Is(err, ErrHeld) true for a *HeldError.
func (e *HeldError) Is(target error) bool { return target == ErrHeld }

func decodeRecord(b []byte) (Record, bool) {
	var r Record
	if err := json.Unmarshal(b, &r); err != nil || r.PID <= 0 {
		return Record{}, false
	}
	return r, true
}
