package mcphttp

import (
	"errors"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/hearth-mcp/hearth/pkg/frame"
)

// errBodyOverloaded: the daemon-wide budget had no room for the rest of a
// body; errBodyTimeout: the body did not arrive whole within BodyTimeout.
var (
	errBodyOverloaded = errors.New("the daemon holds as many unanswered requests as it may")
	errBodyTimeout    = errors.New("the body did not arrive in time")
)

// readBody reads a POST's body whole, at most MaxBody bytes, within
// BodyTimeout. Beyond its first frame.FreeLine bytes the buffer draws on
// the daemon-wide budget (Options.Budget) as the bytes arrive, never on the
// Content-Length announced, so a client that announces much and sends
// little holds little; a body the budget has no room for is
// errBodyOverloaded. The session counts the message itself once it admits
// it (docs/protocol.md, "Streamable HTTP").
func (h *Handler) readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	rc := http.NewResponseController(w)
	if err := rc.SetReadDeadline(time.Now().Add(h.opts.BodyTimeout)); err == nil {
		// The deadline is the body's alone: once it is read, nothing
		// else on the connection (the server watching for the client
		// hanging up while a stream is followed) reads against it.
		defer func() { _ = rc.SetReadDeadline(time.Time{}) }()
	}
	budget := h.opts.Budget
	var reserved int64
	defer func() {
		if reserved > 0 {
			budget.Give(reserved)
		}
	}()
	// A small first buffer, grown as bytes arrive.
	size := int64(4 << 10)
	if n := r.ContentLength; n >= 0 && n < size {
		size = n + 1 // room to see the end without growing
	}
	buf := make([]byte, 0, size)
	body := http.MaxBytesReader(w, r.Body, h.opts.MaxBody)
	for {
		if len(buf) == cap(buf) {
			grown := int64(cap(buf)) * 2
			if limit := h.opts.MaxBody + 1; grown > limit {
				grown = limit
			}
			if budget != nil {
				if need := grown - frame.FreeLine - reserved; need > 0 {
					if !budget.Take(need, false) {
						return nil, errBodyOverloaded
					}
					reserved += need
				}
			}
			next := make([]byte, len(buf), grown)
			copy(next, buf)
			buf = next
		}
		n, err := body.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				return nil, errBodyTimeout
			}
			return nil, err
		}
	}
}
