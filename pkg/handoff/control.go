//go:build linux

package handoff

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// The attach request: the shim's first frame on a new connection, sent with
// its stdin, its stdout, the region's file and the staging pipe's read and
// write ends (SCM_RIGHTS, in that order: AttachFDs descriptors).
// A daemon that serves the descriptors answers with a result and the
// connection carries control messages from then on; any other answer (an
// older daemon's -32601) leaves it an ordinary connection, which the shim
// relays frames over.
const (
	AttachMethod = "$/hearth/attach"
	AttachID     = "hearth-attach"
)

// AttachParams are the attach request's params.
type AttachParams struct {
	// Version is the region layout the shim made.
	Version int `json:"version"`
	// Swallow is the id (JSON text) of a replayed initialize waiting in the
	// journal: its reply is for the shim's replay, not for the client.
	Swallow string `json:"swallow,omitempty"`
}

// AttachVersion is the layout version a daemon checks in AttachParams.
const AttachVersion = version

// AttachFDs is how many descriptors come with the attach request.
const AttachFDs = 5

// Control messages, after the attach: a kind byte, a 4-byte big-endian
// payload length, the payload.
const (
	// MsgStart (shim → daemon, empty): begin serving. The shim first writes
	// the replies it owes for a daemon lost before.
	MsgStart byte = 'S'
	// MsgFrame (daemon → shim): seq (8 bytes, 0 when the frame answers no
	// tracked request), then a frame longer than one atomic write. The shim
	// writes it to the client with its newline, and acknowledges.
	MsgFrame byte = 'F'
	// MsgAck (shim → daemon, empty): the last MsgFrame is written.
	MsgAck byte = 'A'
	// MsgTrack (daemon → shim): seq (8), end (8), id: a request in flight
	// the region has no slot for.
	MsgTrack byte = 'T'
	// MsgUntrack (daemon → shim): seq (8): that request was answered.
	MsgUntrack byte = 'U'
	// MsgReplying (daemon → shim): seq (8): the reply to that request (one
	// MsgTrack named) is in the batch being written; it counts as answered
	// once that batch is staged (decision 0020, "Exactly one answer").
	MsgReplying byte = 'R'
	// MsgOpening (daemon → shim): end (8), then an initialize too long for
	// the region.
	MsgOpening byte = 'O'
	// MsgListen (daemon → shim): seq (8), then a subscriptions/listen
	// request taken in (the frame as the client wrote it). A listen is no
	// call that ran: should the daemon go away with it unanswered, the shim
	// sends it to the next daemon again instead of failing it
	// (docs/decisions/0051-modern-hosted-catalog-and-handover.md).
	MsgListen byte = 'L'
	// MsgEnd (daemon → shim): one byte, EndDone or EndGone. The session is
	// over and the descriptors closed: the shim exits 0.
	MsgEnd byte = 'E'
)

// MsgEnd's reasons.
const (
	// EndDone: the client closed its input and every reply owed is written.
	EndDone byte = 0
	// EndGone: the client went away (stopped reading its stdout).
	EndGone byte = 1
)

// maxPayload bounds a control message: a frame of the largest reply a
// relay carries, and its seq.
const maxPayload = 64<<20 + 16

// WriteMsg writes one control message in a single write.
func WriteMsg(w io.Writer, kind byte, parts ...[]byte) error {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	if n > maxPayload {
		return fmt.Errorf("control message of %d bytes", n)
	}
	buf := make([]byte, 5, 5+n)
	buf[0] = kind
	binary.BigEndian.PutUint32(buf[1:], uint32(n))
	for _, p := range parts {
		buf = append(buf, p...)
	}
	_, err := w.Write(buf)
	return err
}

// ReadMsg reads one control message. Its payload is read into buf when
// buf is large enough (it is valid until buf is used again).
func ReadMsg(r *bufio.Reader, buf []byte) (kind byte, payload []byte, err error) {
	var hdr [5]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return 0, nil, err
	}
	n := binary.BigEndian.Uint32(hdr[1:])
	if n > maxPayload {
		return 0, nil, fmt.Errorf("control message of %d bytes", n)
	}
	if int(n) <= cap(buf) {
		payload = buf[:n]
	} else {
		payload = make([]byte, n)
	}
	if _, err := io.ReadFull(r, payload); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return 0, nil, err
	}
	return hdr[0], payload, nil
}

// U64 encodes v for a message's fixed fields.
func U64(v uint64) []byte { return binary.BigEndian.AppendUint64(nil, v) }

// ParseU64 reads the fixed field at the start of p.
func ParseU64(p []byte) (uint64, []byte, bool) {
	if len(p) < 8 {
		return 0, nil, false
	}
	return binary.BigEndian.Uint64(p), p[8:], true
}
