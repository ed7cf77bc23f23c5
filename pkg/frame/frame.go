// Package frame reads and writes newline-delimited JSON (NDJSON) frames: one
// UTF-8 JSON value per '\n'-terminated line, in both directions
// (docs/protocol.md, "Framing").
//
// The reader enforces the size guard before anything is parsed: a line longer
// than the limit is consumed and discarded in bounded memory and reported as
// [ErrTooLarge], and the stream stays usable for the next line. The writer
// guarantees that a frame never contains a raw newline, so one frame is always
// one line.
package frame

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"sync"
	"sync/atomic"
)

// MaxLine is the largest accepted line in bytes, not counting the newline (1 MiB).
const MaxLine = 1 << 20

// ErrTooLarge reports a line over the reader's limit. The line has been
// discarded; the next Read returns the following line.
var ErrTooLarge = errors.New("payload_too_large")

// ErrOverloaded reports a line dropped because the reader's Budget had no
// room for it (and the reader was not exempt). The line has been discarded;
// the next Read returns the following line.
var ErrOverloaded = errors.New("overloaded")

// Budget bounds the memory that many readers together may hold in lines
// they are still reading (beyond each one's first FreeLine bytes), and
// anything else its users Take from it. It is safe for concurrent use.
type Budget struct {
	max    int64
	used   atomic.Int64
	parent *Budget // Share: what is taken here is taken there too
}

// NewBudget returns a Budget of max bytes.
func NewBudget(max int64) *Budget { return &Budget{max: max} }

// Share returns a budget of at most max bytes carved from b: what its users
// take is taken from b as well, so they never hold more than max of b
// however much of b is free, and b's other users keep the rest.
func (b *Budget) Share(max int64) *Budget { return &Budget{max: max, parent: b} }

// Take reserves n bytes; false when they do not fit (nothing is taken),
// unless force, which takes them anyway (an exempt user never starves).
// A share's bytes must fit both the share and the budget it is carved from.
func (b *Budget) Take(n int64, force bool) bool {
	for {
		used := b.used.Load()
		if !force && used+n > b.max {
			return false
		}
		if b.used.CompareAndSwap(used, used+n) {
			break
		}
	}
	if b.parent != nil && !b.parent.Take(n, force) {
		b.used.Add(-n)
		return false
	}
	return true
}

// Give returns n bytes taken earlier.
func (b *Budget) Give(n int64) {
	b.used.Add(-n)
	if b.parent != nil {
		b.parent.Give(n)
	}
}

// Used is what is taken now.
func (b *Budget) Used() int64 { return b.used.Load() }

// Max is the budget's size.
func (b *Budget) Max() int64 { return b.max }

// FreeLine is how much of a line a reader buffers without drawing on its
// Budget: every connection may hold this much, which covers nearly every
// frame a client sends.
const FreeLine = 64 << 10

// Reader splits a byte stream into lines of at most a fixed size.
type Reader struct {
	br    *bufio.Reader
	limit int
	buf   []byte

	budget   *Budget
	exempt   func() bool // may this reader exceed the budget now?
	reserved int64       // taken from budget for buf

	off int64 // bytes taken from the stream so far (Offset)

	head []byte // the first HeadSize bytes of the last line over the limit

	// whole: a final line without its newline is not a line (WholeLines).
	whole bool
}

// ErrCut reports a final line the stream ended in the middle of (WholeLines).
var ErrCut = errors.New("frame: the stream ended in the middle of a line")

// WholeLines makes a final line without its newline an error (ErrCut)
// rather than a line: for a stream whose writer ends every frame with a
// newline (the daemon's, to the shim), such a tail is a frame cut off by
// the writer's death, never one to deliver. A client's own stream keeps
// the default, where a last line may lack its newline.
func (r *Reader) WholeLines() { r.whole = true }

// HeadSize is how much of a line over the limit the reader keeps (Head): a
// JSON-RPC envelope's id and the names of its members come first.
const HeadSize = 4 << 10

// Head is the opening bytes (at most HeadSize) of the line the last Read
// reported as ErrTooLarge, so that a caller can tell what it was (which
// request a dropped reply answered); empty after any other Read. It is valid
// until the next Read.
func (r *Reader) Head() []byte { return r.head }

// Offset is how many bytes of the stream the reader has used up: through
// the end of the line the last Read returned (or reported as ErrTooLarge or
// ErrOverloaded), its newline and any blank lines before it included.
// Bytes read ahead into the buffer do not count.
func (r *Reader) Offset() int64 { return r.off }

// UseBudget makes the reader draw on b for line bytes beyond FreeLine. When
// b has no room and exempt (nil: never) says the reader may not exceed it,
// the line is discarded and Read returns ErrOverloaded.
func (r *Reader) UseBudget(b *Budget, exempt func() bool) {
	r.budget, r.exempt = b, exempt
}

// grow reserves budget for a buffer of n bytes; false: the line must go.
func (r *Reader) grow(n int) bool {
	if r.budget == nil || n <= FreeLine {
		return true
	}
	need := int64(n-FreeLine) - r.reserved
	if need <= 0 {
		return true
	}
	if !r.budget.Take(need, r.exempt != nil && r.exempt()) {
		return false
	}
	r.reserved += need
	return true
}

// releaseLine returns the previous line's budget and, when that line was
// large, its buffer: an idle connection holds no more than FreeLine.
func (r *Reader) releaseLine() {
	if r.reserved > 0 {
		r.budget.Give(r.reserved)
		r.reserved = 0
	}
	if cap(r.buf) > FreeLine {
		r.buf = nil
	}
}

// Close gives back what the reader holds of its budget (call it when the
// stream is done).
func (r *Reader) Close() { r.releaseLine() }

// NewReader returns a Reader with the MaxLine limit.
func NewReader(r io.Reader) *Reader { return NewReaderSize(r, MaxLine) }

// NewReaderSize returns a Reader that rejects lines longer than limit bytes.
func NewReaderSize(r io.Reader, limit int) *Reader {
	return &Reader{br: bufio.NewReaderSize(r, 64<<10), limit: limit}
}

// Read returns the next non-blank line without its terminator (a trailing '\r'
// is kept: JSON treats it as whitespace). The slice is valid until the next
// call. It returns ErrTooLarge for an over-long line (and can be called again),
// io.EOF at the end of the stream, or the underlying read error. A final line
// without a newline is returned as a line, EOF following, unless WholeLines
// was called: then it is ErrCut.
func (r *Reader) Read() ([]byte, error) {
	for {
		line, err := r.readLine()
		if err != nil {
			return nil, err
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue // blank lines separate nothing; skip them rather than answer them
		}
		return line, nil
	}
}

func (r *Reader) readLine() ([]byte, error) {
	r.releaseLine()
	r.buf = r.buf[:0]
	r.head = r.head[:0]
	tooLarge, overloaded := false, false
	for {
		chunk, err := r.br.ReadSlice('\n')
		r.off += int64(len(chunk))
		n := len(chunk)
		if err == nil {
			n-- // the newline does not count towards the limit
		}
		if !tooLarge && !overloaded && len(r.buf)+n > r.limit {
			tooLarge = true // keep reading to the newline, keeping only its head
			r.head = append(r.head, r.buf[:min(len(r.buf), HeadSize)]...)
			r.head = append(r.head, chunk[:min(len(chunk), HeadSize-len(r.head))]...)
			r.buf = r.buf[:0]
		}
		if !tooLarge && !overloaded && !r.grow(len(r.buf)+len(chunk)) {
			overloaded = true // likewise: the daemon has no room for it
			r.releaseLine()
			r.buf = r.buf[:0]
		}
		if !tooLarge && !overloaded {
			r.buf = append(r.buf, chunk...)
		}
		switch {
		case err == nil: // chunk ends with '\n'
			if tooLarge {
				return nil, ErrTooLarge
			}
			r.head = r.head[:0]
			if overloaded {
				return nil, ErrOverloaded
			}
			return r.buf[:len(r.buf)-1], nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			if tooLarge {
				return nil, ErrTooLarge
			}
			if overloaded {
				return nil, ErrOverloaded
			}
			if len(r.buf) > 0 {
				if r.whole {
					return nil, ErrCut
				}
				return r.buf, nil
			}
			return nil, io.EOF
		default:
			return nil, err
		}
	}
}

// Writer writes frames to a stream. It is safe for concurrent use; each frame
// is written whole. Writes are buffered until Flush, so a caller that knows
// more frames follow can batch them into one system call.
type Writer struct {
	mu  sync.Mutex
	bw  *bufio.Writer
	err error
}

// NewWriter returns a Writer on w.
func NewWriter(w io.Writer) *Writer { return &Writer{bw: bufio.NewWriterSize(w, 32<<10)} }

// WriteRaw writes one frame from JSON text. Text containing a raw newline
// (only possible between tokens, since JSON strings escape it) is compacted
// first; text that is not valid JSON is refused.
func (w *Writer) WriteRaw(msg []byte) error {
	if bytes.IndexByte(msg, '\n') >= 0 || bytes.IndexByte(msg, '\r') >= 0 {
		var c bytes.Buffer
		if err := json.Compact(&c, msg); err != nil {
			return err
		}
		msg = c.Bytes()
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	if _, err := w.bw.Write(msg); err != nil {
		w.err = err
		return err
	}
	if err := w.bw.WriteByte('\n'); err != nil {
		w.err = err
		return err
	}
	return nil
}

// Write marshals v as one frame. HTML characters are not escaped: clients get
// the text as it is.
func (w *Writer) Write(v any) error {
	b, err := Marshal(v)
	if err != nil {
		return err
	}
	return w.WriteRaw(b)
}

// Flush sends buffered frames to the stream.
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	if err := w.bw.Flush(); err != nil {
		w.err = err
		return err
	}
	return nil
}

// Err returns the first write error, after which every write fails.
func (w *Writer) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// Marshal encodes v as compact JSON without HTML escaping and without the
// trailing newline json.Encoder adds.
func Marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	out := b.Bytes()
	return out[:len(out)-1], nil
}
