package clarify

import (
	"crypto/rand"
	"encoding/binary"
	"regexp"
	"sync"
	"time"
)

// UIDs name ADRs and archived tasks, as Preflights names them: YYYYMMDDTHHMMSS.mmmZ-XXXX,
// UTC, with a 4-character suffix in Crockford's base32, whose alphabet is in
// ASCII order, so lexicographic order is creation order.
//
// Within the daemon UIDs strictly increase: a UID in the same millisecond as
// the previous one takes the previous suffix plus one (and a suffix that
// overflows moves to the next millisecond). Each millisecond's first suffix is
// random, so UIDs made by other processes or machines (the Preflights CLI, a
// branch) are unlikely to collide; the exclusive file creation of ADRs
// catches the rest.
const uidAlphabet = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

// uidPattern matches a UID.
var uidPattern = regexp.MustCompile(`^\d{8}T\d{6}\.\d{3}Z-[0-9A-HJKMNP-TV-Z]{4}$`)

const suffixSpace = 1 << 20 // 32^4

type uidSource struct {
	mu     sync.Mutex
	now    func() time.Time
	lastMs int64
	last   uint32
}

func newUIDSource(now func() time.Time) *uidSource { return &uidSource{now: now} }

func (u *uidSource) next() string {
	u.mu.Lock()
	defer u.mu.Unlock()
	ms := u.now().UnixMilli()
	switch {
	case ms > u.lastMs:
		// A fresh millisecond: a random start in the lower half leaves room
		// for many more UIDs in the same millisecond.
		var b [4]byte
		rand.Read(b[:])
		u.lastMs, u.last = ms, binary.BigEndian.Uint32(b[:])%(suffixSpace/2)
	case u.last+1 < suffixSpace:
		u.last++ // the same millisecond (or the clock went back): keep increasing
	default:
		u.lastMs, u.last = u.lastMs+1, 0
	}
	t := time.UnixMilli(u.lastMs).UTC()
	var suf [4]byte
	for i, v := 3, u.last; i >= 0; i, v = i-1, v/32 {
		suf[i] = uidAlphabet[v%32]
	}
	return t.Format("20060102T150405.000Z") + "-" + string(suf[:])
}
