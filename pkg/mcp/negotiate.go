package mcp

import (
	"context"
	"encoding/json"
	"net/url"
	"path"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/hearth-mcp/hearth/pkg/jsonrpc"
)

// negotiation is the session's part that holds what the client and the
// session agreed on: the protocol era (fixed by the first request that
// decides it), initialization and the log level of a legacy session, and
// the client's roots (asked with roots/list when it declared the
// capability).
type negotiation struct {
	// era is the reader's own: the protocol era the connection opened with
	// (eraNone until a request decides it; never changed after).
	era int32
	// modern mirrors era == eraModern for other goroutines.
	modern      atomic.Bool
	initialized atomic.Bool
	logLevel    atomic.Int32 // a legacy session's logging/setLevel

	// rootsCapable: the client declared the roots capability, so the
	// session asks it for roots/list (its workspace folders).
	rootsCapable atomic.Bool
	rootsAsked   atomic.Int64
	rootsMu      sync.Mutex
	rootsWait    chan struct{} // under rootsMu: closed when the latest roots/list is answered
}

// eraOf fixes the connection's era with the first request that decides it
// and checks the request against it: on a modern connection it returns the
// request's own _meta (nil for ping and plain tool methods, which need
// none); a request that does not belong to the connection's era, or whose
// _meta is malformed, gets the error to answer it with.
func (s *registry) eraOf(msg *jsonrpc.Message) (*reqMeta, *jsonrpc.Error) {
	if _, plain := s.plainMethod(msg.Method); plain {
		return nil, nil // plain JSON-RPC: outside both eras
	}
	d := msg.ParamsDoc()
	switch s.nego.era {
	case eraNone:
		switch {
		case msg.Method == "initialize":
			s.nego.era = eraLegacy
			return nil, nil
		case modernShaped(d):
			s.nego.era = eraModern
			s.nego.modern.Store(true)
			if s.fifo.outstanding.Load() == 0 {
				s.concurrent = true // nothing is ahead of this request
			}
		case msg.Method == "server/discover":
			// Not modern yet: a client that falls back to initialize on
			// this error still can.
			_, err := readMeta(d)
			return nil, err
		default:
			return nil, nil
		}
	case eraLegacy:
		if msg.Method == "server/discover" || modernShaped(d) {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "Invalid Request: this connection opened with initialize (a 2025 session); " +
				"requests with _meta " + strconv.Quote(metaProtocolVersion) + " and server/discover need a new connection"}
		}
		return nil, nil
	}
	// A modern connection.
	switch msg.Method {
	case "initialize":
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "Invalid Request: this connection speaks protocol " + ModernVersions[0] +
			" (per-request _meta); initialize belongs to the 2025 versions and needs a new connection"}
	case "ping":
		return nil, nil
	}
	m, err := readMeta(d)
	if err != nil {
		return nil, err
	}
	s.noteModernClient(&m)
	return &m, nil
}

// rootsIDPrefix marks the ids of the session's own roots/list requests.
const rootsIDPrefix = "hearth-roots-"

// requestRoots asks the client for its roots (MCP roots/list). The answer
// arrives as a response, handled by the reader.
func (s *registry) requestRoots() {
	n := s.nego.rootsAsked.Add(1)
	s.nego.rootsMu.Lock()
	s.nego.rootsWait = make(chan struct{})
	s.nego.rootsMu.Unlock()
	b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": rootsIDPrefix + strconv.FormatInt(n, 10), "method": "roots/list"})
	if err != nil {
		return
	}
	s.out.write(b, "")
	s.out.flush()
}

// response handles a response from the client: only answers to the
// session's own roots/list requests are expected; anything else is dropped.
func (s *registry) response(msg *jsonrpc.Message) {
	var id string
	if json.Unmarshal(msg.ID.Raw(), &id) != nil || !strings.HasPrefix(id, rootsIDPrefix) {
		s.log.Debug("dropped a response from the client", zap.String("id", msg.ID.Key()))
		return
	}
	// Answers to an older request are stale once a newer one was sent.
	if n, err := strconv.ParseInt(strings.TrimPrefix(id, rootsIDPrefix), 10, 64); err != nil || n != s.nego.rootsAsked.Load() {
		return
	}
	defer s.rootsAnswered()
	if len(msg.Error) > 0 {
		s.log.Debug("the client refused roots/list", zap.ByteString("error", msg.Error))
		return
	}
	var r struct {
		Roots []struct {
			URI string `json:"uri"`
		} `json:"roots"`
	}
	if json.Unmarshal(msg.Result, &r) != nil {
		s.log.Debug("malformed roots/list result", zap.ByteString("result", msg.Result))
		return
	}
	roots := make([]string, 0, len(r.Roots))
	for _, root := range r.Roots {
		if p, ok := fileURIPath(root.URI); ok {
			roots = append(roots, p)
		}
	}
	s.peer.setRoots(roots)
}

// rootsAnswered releases calls waiting for the roots.
func (s *registry) rootsAnswered() {
	n := &s.nego
	n.rootsMu.Lock()
	defer n.rootsMu.Unlock()
	if n.rootsWait != nil {
		close(n.rootsWait)
		n.rootsWait = nil
	}
}

// rootsWaitMax bounds how long a tool call waits for the client to answer
// roots/list: long enough for any live client, short enough that one that
// never answers costs a single call this much once.
const rootsWaitMax = 2 * time.Second

// awaitRoots lets a tool call that arrives right after initialization wait
// until the client has said what its roots are, so the repository it works
// on does not depend on a race.
func (s *registry) awaitRoots(ctx context.Context) {
	s.nego.rootsMu.Lock()
	ch := s.nego.rootsWait
	s.nego.rootsMu.Unlock()
	if ch == nil {
		return
	}
	t := time.NewTimer(rootsWaitMax)
	defer t.Stop()
	select {
	case <-ch:
	case <-ctx.Done():
	case <-t.C:
		s.log.Info("the client did not answer roots/list; going on without its roots", zap.Duration("waited", rootsWaitMax))
		s.rootsAnswered()
	}
}

// fileURIPath returns the local path of a file:// URI (MCP roots are file
// URIs); ok is false for anything else.
func fileURIPath(uri string) (string, bool) {
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "file" || (u.Host != "" && u.Host != "localhost") || !path.IsAbs(u.Path) {
		return "", false
	}
	return path.Clean(u.Path), true
}
