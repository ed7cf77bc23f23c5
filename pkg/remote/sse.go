package remote

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strconv"
	"strings"
	"time"
)

// event is one server-sent event (the WHATWG event stream format).
type event struct {
	ID    string // "" when the event set none
	hasID bool
	Name  string // "message" when unnamed
	Data  []byte
	Retry time.Duration // 0 when not set
}

// errEventTooLarge: an event's data went over the reader's limit; the rest
// of it was skipped and the stream goes on.
var errEventTooLarge = errors.New("an event larger than the limit")

// sseReader reads events from a stream, each at most limit bytes of data,
// lines at most limit bytes too: nothing it reads grows without bound.
type sseReader struct {
	r     *bufio.Reader
	limit int
	first bool
}

func newSSEReader(r io.Reader, limit int) *sseReader {
	return &sseReader{r: bufio.NewReaderSize(r, 32<<10), limit: limit, first: true}
}

// line reads one line without its end (CRLF, LF or CR), or errEventTooLarge
// (the rest of the line skipped) when it is longer than the limit.
func (s *sseReader) line() ([]byte, error) {
	var buf []byte
	over := false
	for {
		chunk, err := s.r.ReadSlice('\n')
		if !over {
			if len(buf)+len(chunk) > s.limit+2 {
				over, buf = true, nil
			} else {
				buf = append(buf, chunk...)
			}
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil && (len(buf) == 0 || err != io.EOF) {
			return nil, err
		}
		if over {
			return nil, errEventTooLarge
		}
		buf = bytes.TrimSuffix(buf, []byte("\n"))
		buf = bytes.TrimSuffix(buf, []byte("\r"))
		// A lone CR also ends a line; such streams are rare, and a CR
		// inside is split here.
		if i := bytes.IndexByte(buf, '\r'); i >= 0 {
			// Not seen from MCP servers; kept simple: text after a CR is a
			// line of its own that is dropped with the rest of the event's
			// fields processed normally.
			buf = buf[:i]
		}
		if s.first {
			s.first = false
			buf = bytes.TrimPrefix(buf, []byte("\xef\xbb\xbf"))
		}
		return buf, nil
	}
}

// next reads the next event with data (events without data are only
// their id and retry, which next applies to the one it returns... or
// returns alone so the caller keeps the last event id).
func (s *sseReader) next() (event, error) {
	var ev event
	var data []byte
	hasData, over := false, false
	for {
		l, err := s.line()
		if err == errEventTooLarge {
			over = true
			continue
		}
		if err != nil {
			return event{}, err
		}
		if len(l) == 0 { // dispatch
			if over {
				return ev, errEventTooLarge
			}
			if !hasData && !ev.hasID && ev.Retry == 0 {
				ev = event{}
				continue
			}
			if ev.Name == "" {
				ev.Name = "message"
			}
			ev.Data = data
			return ev, nil
		}
		if l[0] == ':' {
			continue // a comment (keep-alive)
		}
		field, value, _ := strings.Cut(string(l), ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "data":
			if over {
				continue
			}
			if len(data)+len(value)+1 > s.limit {
				over, data = true, nil
				continue
			}
			if hasData {
				data = append(data, '\n')
			}
			data = append(data, value...)
			hasData = true
		case "event":
			ev.Name = value
		case "id":
			if !strings.ContainsRune(value, 0) {
				ev.ID, ev.hasID = value, true
			}
		case "retry":
			if n, err := strconv.Atoi(value); err == nil && n >= 0 {
				ev.Retry = time.Duration(n) * time.Millisecond
				if ev.Retry == 0 {
					ev.Retry = time.Millisecond
				}
			}
		}
	}
}
