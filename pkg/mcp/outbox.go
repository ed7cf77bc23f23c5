package mcp

import (
	"sync/atomic"

	"go.uber.org/zap"

	"github.com/hearth-mcp/hearth/pkg/frame"
	"github.com/hearth-mcp/hearth/pkg/jsonrpc"
)

// FrameSource is where a session reads its client's frames, one JSON-RPC
// message each. Conn.Reader is read as NDJSON lines (a frame.Reader) unless
// the transport brings its own (Conn.Source), as one that receives each
// message apart (an HTTP request body) does.
type FrameSource interface {
	// Read returns the next frame. frame.ErrTooLarge and
	// frame.ErrOverloaded report a frame discarded unread (the session
	// answers it and reads on); any other error ends the input, io.EOF
	// when it simply ended.
	Read() ([]byte, error)
	// Offset is the stream offset just past the frame last read, for
	// Conn.Tracker (any increasing count will do for a source no Tracker
	// watches).
	Offset() int64
	// Close releases what the source holds once the session stops reading.
	Close()
}

// MessageSource is a FrameSource that decodes each frame itself, as a
// transport that must look into a message before the session sees it (an
// HTTP POST's body) does: the session then takes the message as decoded
// rather than decoding it again (docs/decisions/0011).
type MessageSource interface {
	FrameSource
	// ReadMessage returns the next frame and its decoded message, with the
	// errors Read has; a nil msg means the session decodes line itself.
	ReadMessage() (msg *jsonrpc.Message, line []byte, err error)
}

// FrameSink is where a session sends frames to its client. It is called from
// several goroutines at once and must keep each frame whole.
type FrameSink interface {
	// Send buffers one frame. re is the key (jsonrpc.ID.Key) of the client
	// request the frame belongs to: its reply, or a notification about it
	// while it runs (progress, log messages, a subscription's
	// notifications); "" for a frame of the connection itself (a list
	// change on a legacy session, the session's own roots/list request, the
	// reply to a frame without an id). A transport that answers each
	// request apart (Streamable HTTP) routes by it; a stream ignores it.
	Send(frame []byte, re string) error
	// Flush delivers what Send buffered. The session flushes whenever a
	// reply must not wait; an error (as from Send) means the client is
	// gone.
	Flush() error
}

// streamSink is the FrameSink of a stream transport: NDJSON on Conn.Writer,
// every frame in the order sent, whatever it belongs to.
type streamSink struct{ w *frame.Writer }

func (s streamSink) Send(b []byte, _ string) error { return s.w.WriteRaw(b) }
func (s streamSink) Flush() error                  { return s.w.Flush() }

// outbox is the session's part that sends: it owns the sink and knows
// whether anything may still be written. Once silenced (the peer is gone, a
// write failed, or Serve returned) nothing more is.
type outbox struct {
	sink     FrameSink
	silenced atomic.Bool
	// failed is told of the first write error: the peer stopped reading.
	failed func(error)
}

func (o *outbox) init(c Conn, failed func(error)) {
	o.sink = c.Sink
	if o.sink == nil {
		o.sink = streamSink{frame.NewWriter(c.Writer)}
	}
	o.failed = failed
}

func (o *outbox) silence() { o.silenced.Store(true) }

// write buffers one frame belonging to the request re (FrameSink.Send).
func (o *outbox) write(b []byte, re string) {
	if o.silenced.Load() {
		return
	}
	if err := o.sink.Send(b, re); err != nil {
		o.failed(err)
	}
}

func (o *outbox) flush() {
	if o.silenced.Load() {
		return
	}
	if err := o.sink.Flush(); err != nil {
		o.failed(err)
	}
}

// failWrite ends the session: nobody is reading, so running work is cancelled
// and the reader is stopped.
func (s *session) failWrite(err error) {
	if s.out.silenced.Load() {
		return
	}
	s.log.Info("client stopped reading; ending the session", zap.Error(err))
	s.hangUp(ErrWriteFailed)
}

// notifyClient sends a notification about the request re now (progress, log
// messages, subscription notices; "" for the connection's own).
func (s *session) notifyClient(method string, params any, re string) {
	b, err := jsonrpc.NotificationFrame(method, params)
	if err != nil {
		s.log.Error("notification did not marshal", zap.String("method", method), zap.Error(err))
		return
	}
	s.out.write(b, re)
	s.out.flush()
}
