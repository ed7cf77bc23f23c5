// Package sessionkeep keeps, on disk, what a 2025 Streamable HTTP session
// negotiated, so a daemon started after the one that opened it (a crash, a
// kill -9, a restart or an upgrade) can take the session back under the same
// Mcp-Session-Id (docs/protocol.md, "Streamable HTTP"; decision 0027).
//
// One file per session, <id>.json, 0600 in a 0700 directory of the user's
// own (safefile.OwnDir): the id is the bearer of its session, so no other
// user may read a record, and none may plant one; a record is read by the
// rule for hearth's own files (safefile.OpenOwn), at most 1 MiB.
package sessionkeep

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/hearth-mcp/hearth/pkg/atomicfile"
	"github.com/hearth-mcp/hearth/pkg/safefile"
)

// Record is what a session negotiated: enough to initialize a new session
// as the client once did.
type Record struct {
	ID   string `json:"id"`
	Path string `json:"path"` // the endpoint that opened it: /mcp or /servers/NAME/mcp
	// Initialize is the params of the client's initialize, as it sent
	// them (protocol version, capabilities, clientInfo).
	Initialize json.RawMessage `json:"initialize"`
	// LogLevel is the level of the client's last logging/setLevel ("":
	// none).
	LogLevel string    `json:"log_level,omitempty"`
	Created  time.Time `json:"created"`
	// Used is when the session was last used: the file's modification
	// time, which Touch moves without rewriting the record.
	Used time.Time `json:"-"`
}

// maxRecord bounds one record: what a session negotiated is a few hundred
// bytes (its initialize params).
const maxRecord = 1 << 20

// Dir is a directory of records.
type Dir struct{ dir string }

// ErrBadID: the id is not one hearth gives out, so it names no record (and
// never a path).
var ErrBadID = errors.New("not a session id hearth gives out")

// Open makes dir private (created 0700, or narrowed to it; refused when it
// is another user's or a link: safefile.OwnDir) and returns it.
func Open(dir string) (*Dir, error) {
	if err := safefile.OwnDir(dir); err != nil {
		return nil, err
	}
	return &Dir{dir: dir}, nil
}

// ValidID: 32 lower-case hex digits, as mcphttp makes them. Anything else
// is refused before it becomes part of a file name.
func ValidID(id string) bool {
	if len(id) != 32 {
		return false
	}
	for _, c := range []byte(id) {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

func (d *Dir) file(id string) (string, error) {
	if !ValidID(id) {
		return "", ErrBadID
	}
	return filepath.Join(d.dir, id+".json"), nil
}

// Save writes r whole (replacing an earlier record of the session).
func (d *Dir) Save(r Record) error {
	p, err := d.file(r.ID)
	if err != nil {
		return err
	}
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	return atomicfile.Write(p, b, 0o600)
}

// Load reads the record of id; fs.ErrNotExist when there is none.
func (d *Dir) Load(id string) (Record, error) {
	p, err := d.file(id)
	if err != nil {
		return Record{}, fs.ErrNotExist
	}
	// A file of hearth's own (safefile.OpenOwn): a FIFO, a link or another
	// user's file at the name is refused at once, never waited on.
	f, err := safefile.OpenOwn(p)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return Record{}, err
		}
		return Record{}, fmt.Errorf("session record: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return Record{}, err
	}
	b, err := safefile.ReadLimited(f, p, maxRecord)
	if err != nil {
		return Record{}, fmt.Errorf("session record: %w", err)
	}
	var r Record
	if err := json.Unmarshal(b, &r); err != nil {
		return Record{}, fmt.Errorf("session record %s: %w", p, err)
	}
	if r.ID != id {
		return Record{}, fmt.Errorf("session record %s names another session", p)
	}
	r.Used = fi.ModTime()
	return r, nil
}

// Touch records that the session was used at t.
func (d *Dir) Touch(id string, t time.Time) error {
	p, err := d.file(id)
	if err != nil {
		return err
	}
	return os.Chtimes(p, t, t)
}

// Remove forgets the session: it ended for good.
func (d *Dir) Remove(id string) error {
	p, err := d.file(id)
	if err != nil {
		return err
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// Sweep removes the records unused for longer than idle: sessions no daemon
// took back in time, which no daemon would accept any more.
func (d *Dir) Sweep(idle time.Duration, now time.Time) {
	ents, err := os.ReadDir(d.dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		name := e.Name()
		id, ok := strings.CutSuffix(name, ".json")
		if !ok || !ValidID(id) {
			continue
		}
		if fi, err := e.Info(); err == nil && now.Sub(fi.ModTime()) > idle {
			_ = os.Remove(filepath.Join(d.dir, name))
		}
	}
}
