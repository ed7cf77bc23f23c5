//go:build unix || windows

package owner

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/hearth-mcp/hearth/pkg/atomicfile"
	"github.com/hearth-mcp/hearth/pkg/endpoint"
	"github.com/hearth-mcp/hearth/pkg/safefile"
)

// Lock is a held ownership of one data directory.
type Lock struct {
	f    *os.File
	home string
	// Narrowed is the data directory's mode before Acquire closed it to
	// other users (0 when it already was): the owner says so in its log.
	Narrowed os.FileMode
	// Previous is the record a dead owner left (killed before it could
	// remove it), PID 0 when there was none: its socket and readiness file
	// may be left too, for the new owner to clean up.
	Previous Record
}

// acquireRetry bounds how long Acquire retries a lock whose recorded pid is
// dead: a Find takes the lock shared for an instant, and a new owner writes
// its pid just after locking.
const acquireRetry = 500 * time.Millisecond

// Acquire takes home's owner lock without waiting for a live owner. It
// creates home (0700) if needed, and closes one that is open to other
// users, or refuses one that is not the user's (endpoint.PrivateDir):
// whoever owns the stores keeps them private. Another live owner: a
// *HeldError naming it.
func Acquire(home string) (*Lock, error) {
	narrowed, err := endpoint.PrivateDir(home)
	if err != nil {
		return nil, fmt.Errorf("the data directory: %w", err)
	}
	path := filepath.Join(home, LockName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|openFlags, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open the owner lock %s: %w", path, err)
	}
	deadline := time.Now().Add(acquireRetry)
	for {
		got, err := tryLock(f, true)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		if got {
			break
		}
		if pid := readPID(f); (pid > 0 && alive(pid)) || time.Now().After(deadline) {
			f.Close()
			rec, state, _ := Find(home)
			if state == None { // it went away meanwhile; say who held it
				state, rec = Starting, Record{PID: pid, Home: home}
			}
			return nil, &HeldError{Home: home, State: state, Record: rec}
		}
		time.Sleep(5 * time.Millisecond)
	}
	err = f.Truncate(0)
	if err == nil {
		_, err = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("write the owner lock %s: %w", path, err)
	}
	l := &Lock{f: f, home: home, Narrowed: narrowed}
	if b, err := readRecord(home); err == nil {
		// We hold the lock, so whoever wrote the record no longer does.
		if r, ok := decodeRecord(b); ok && r.PID != os.Getpid() {
			l.Previous = r
		}
	}
	return l, nil
}

// Home is the data directory this lock owns.
func (l *Lock) Home() string { return l.home }

// Publish records where the owner serves, replacing the record atomically.
func (l *Lock) Publish(r Record) error {
	r.PID, r.Home = os.Getpid(), l.home
	if r.Started.IsZero() {
		r.Started = time.Now()
	}
	r.Started = r.Started.UTC()
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	return atomicfile.Write(filepath.Join(l.home, RecordName), append(b, '\n'), 0o600)
}

// Release removes the record and lets the lock go. The lock file stays: a
// successor opens the same file, so two processes can never lock two files.
func (l *Lock) Release() {
	path := filepath.Join(l.home, RecordName)
	if b, err := readRecord(l.home); err == nil {
		if r, ok := decodeRecord(b); ok && r.PID == os.Getpid() {
			os.Remove(path)
		}
	}
	l.f.Close()
}

// Find reports who owns home. It never blocks and never creates anything.
func Find(home string) (Record, State, error) {
	f, err := os.OpenFile(filepath.Join(home, LockName), os.O_RDWR|openFlags, 0)
	if errors.Is(err, os.ErrNotExist) {
		return Record{}, None, nil
	}
	if err != nil {
		return Record{}, None, fmt.Errorf("open the owner lock in %s: %w", home, err)
	}
	defer f.Close()
	pid := readPID(f)
	if pid > 0 && !alive(pid) {
		return Record{}, None, nil
	}
	// The pid is alive, or not written yet: is the lock really held? A
	// shared lock is refused while the owner holds it exclusively.
	if got, err := tryLock(f, false); err != nil {
		return Record{}, None, fmt.Errorf("test the owner lock in %s: %w", home, err)
	} else if got {
		unlock(f)
		return Record{}, None, nil
	}
	b, err := readRecord(home)
	if err == nil {
		if r, ok := decodeRecord(b); ok && r.PID == pid {
			return r, Serving, nil
		}
	}
	return Record{PID: pid, Home: home}, Starting, nil
}

// Stale is the record of a dead owner of home: one that no longer holds the
// lock (killed, or its machine restarted) but whose record is still there,
// naming a socket and readiness file nobody serves. ok is false when home
// has a live owner or no record.
func Stale(home string) (r Record, ok bool) {
	if _, state, err := Find(home); err != nil || state != None {
		return Record{}, false
	}
	b, err := readRecord(home)
	if err != nil {
		return Record{}, false
	}
	return decodeRecord(b)
}

// maxRecord bounds the owner record read: a few hundred bytes of JSON.
const maxRecord = 64 << 10

// readRecord reads home's owner record, a file of hearth's own (the rule of
// safefile.OpenOwn: a link, a FIFO, another user's file or one over
// maxRecord is refused at once, so neither the daemon nor a shim looking
// for it ever waits on one).
func readRecord(home string) ([]byte, error) {
	return safefile.ReadOwn(filepath.Join(home, RecordName), maxRecord)
}

func readPID(f *os.File) int {
	buf := make([]byte, 32)
	n, _ := f.ReadAt(buf, 0)
	pid, err := strconv.Atoi(strings.TrimSpace(string(buf[:n])))
	if err != nil {
		return 0
	}
	return pid
}

// File is the lock's open file: a daemon handing over
// (docs/decisions/0046-upstream-handover.md) sends it to its successor, so
// that the lock is held without a gap, in which a shim would start a
// daemon of its own.
func (l *Lock) File() *os.File { return l.f }
