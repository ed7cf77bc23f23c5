// Package remote is hearth's client of a remote MCP server: Streamable
// HTTP of both eras (2025: one POST per message answered with JSON or an
// event stream, the session of Mcp-Session-Id, the GET stream, resumption
// by Last-Event-ID, DELETE at the end; 2026-07-28: each request its own
// POST with its metadata mirrored in headers, cancellation by closing its
// stream) and, where a server offers nothing else, the HTTP+SSE transport
// of 2024-11-05, found by the fallback rule the specification gives.
//
// A Conn is to a hosted server's router what a child's pipes are: frames
// go in one at a time (Write, or newline-delimited through Stdin) and come
// out newline-delimited on Stdout, in the order the server sent each
// stream's, every frame compact JSON on one line. The bearer token comes
// from an Authorizer (the server's oauth.Manager), and a 401 or 403 is
// handed to it for a refresh, a step-up or the one "sign-in needed" state.
// Every read is bounded: a message over the limit is refused, never
// buffered whole.
package remote

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/hearth-mcp/hearth/pkg/envelope"
	"github.com/hearth-mcp/hearth/pkg/jsonrpc"
	"github.com/hearth-mcp/hearth/pkg/oauth"
)

// Authorizer gives the token for each request and handles the server's
// refusals of one (an *oauth.Manager).
type Authorizer interface {
	Token(ctx context.Context) (oauth.Token, error)
	Challenged(ctx context.Context, tok oauth.Token, status int, header http.Header) (oauth.Token, error)
}

// Options describe the remote server.
type Options struct {
	// URL is the MCP endpoint.
	URL string
	// Name names the server in errors (default: the URL's host).
	Name string
	// Header is sent with every request (static credentials, already
	// expanded from the vault; never logged).
	Header http.Header
	// Auth authorizes the requests (nil: none).
	Auth Authorizer
	// HTTP is the client (nil: one with dial and TLS timeouts and no
	// overall one, since event streams last).
	HTTP *http.Client
	// MaxMessage bounds one message from the server (default 64 MiB, as a
	// hosted child's line).
	MaxMessage int
	// Log gets what is worth a line (never a message's content).
	Log *zap.Logger
}

// CodeUnreachable is the JSON-RPC error a request gets when the server
// could not be reached or answered no valid response (the code hosted
// servers answer when their upstream failed).
const CodeUnreachable = -32010

// ErrSessionEnded: the server no longer knows the 2025 session (404 to a
// request carrying its Mcp-Session-Id); a new one starts with a new
// initialize, so the Conn ends as a child that exited would.
var ErrSessionEnded = errors.New("the server ended the session")

type mode int

const (
	undecided mode = iota
	streamable
	legacySSE
)

// Conn is one connection to a remote server (see the package comment).
type Conn struct {
	o      Options
	hc     *http.Client
	ctx    context.Context
	cancel context.CancelFunc
	outR   *io.PipeReader
	outW   *io.PipeWriter
	log    *zap.Logger

	mu       sync.Mutex
	mode     mode
	deciding chan struct{} // closed when the mode is decided
	session  string        // 2025's Mcp-Session-Id
	protocol string        // the version initialize negotiated (2025)
	initKey  string        // the id key of the initialize in flight
	probing  bool          // an initialize is deciding the transport
	getOpen  bool
	endpoint string // the 2024-11-05 transport's POST URL
	inflight map[string]*call
	// toolHeaders are the arguments each tool mirrors in headers
	// (headers.go).
	toolHeaders map[string][]paramHeader
	// sent are the last access tokens sent, so that a server's error text
	// that repeats one is shown without it.
	sent      []string
	done      chan struct{}
	err       error
	closeOnce sync.Once
	wg        sync.WaitGroup
}

// call is a request in flight.
type call struct {
	id        []byte
	key       string
	method    string
	modern    bool
	cancel    context.CancelFunc
	cancelled bool
	probe     bool // this initialize decides the transport
	answered  bool // its answer was delivered
}

// Dial prepares a connection to the server; nothing is sent until the
// first frame.
func Dial(o Options) (*Conn, error) {
	if o.URL == "" {
		return nil, errors.New("remote: no URL")
	}
	if o.MaxMessage <= 0 {
		o.MaxMessage = 64 << 20
	}
	if o.Name == "" {
		o.Name = o.URL
	}
	hc := o.HTTP
	if hc == nil {
		hc = &http.Client{Transport: &http.Transport{
			Proxy:               http.ProxyFromEnvironment,
			DialContext:         (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
			TLSHandshakeTimeout: 30 * time.Second,
			MaxIdleConnsPerHost: 16,
			IdleConnTimeout:     90 * time.Second,
		}}
	}
	log := o.Log
	if log == nil {
		log = zap.NewNop()
	}
	ctx, cancel := context.WithCancel(context.Background())
	r, w := io.Pipe()
	return &Conn{o: o, hc: hc, ctx: ctx, cancel: cancel, outR: r, outW: w, log: log,
		deciding: make(chan struct{}), inflight: map[string]*call{}, done: make(chan struct{})}, nil
}

// Stdout yields the server's frames, one per line, until the Conn ends.
func (c *Conn) Stdout() io.ReadCloser { return c.outR }

// Stdin takes newline-delimited frames, as a child's stdin would.
func (c *Conn) Stdin() io.WriteCloser { return &lineWriter{c: c, limit: c.o.MaxMessage} }

// Done is closed when the Conn ended (Close, or the server ended the
// session); Err says why.
func (c *Conn) Done() <-chan struct{} { return c.done }

// Err is why the Conn ended (nil while it serves).
func (c *Conn) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Session is the 2025 session id ("" when none).
func (c *Conn) Session() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.session
}

// Close ends the Conn: requests in flight are abandoned, a 2025 session
// is ended with DELETE, and Stdout reaches its end.
func (c *Conn) Close() error {
	c.end(errors.New("closed"), true)
	c.wg.Wait()
	return nil
}

func (c *Conn) end(why error, deleteSession bool) {
	c.closeOnce.Do(func() {
		c.mu.Lock()
		c.err = why
		session := c.session
		c.mu.Unlock()
		c.cancel()
		if deleteSession && session != "" {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			req, err := http.NewRequestWithContext(ctx, "DELETE", c.o.URL, nil)
			if err == nil {
				c.headers(req, nil, "")
				req.Header.Set("Mcp-Session-Id", session)
				if res, err := c.hc.Do(req); err == nil {
					drain(res)
				}
			}
			cancel()
		}
		c.outW.CloseWithError(io.EOF)
		close(c.done)
	})
}

// TryWrite never writes: every frame is an HTTP exchange, Write's to make.
func (c *Conn) TryWrite([]byte, string) (bool, error) { return false, nil }

// Write sends one frame (no newline) to the server: a request is posted
// and its answer comes out of Stdout; a notification or a response is
// posted before Write returns, so the server sees them in order.
func (c *Conn) Write(frame []byte, _ string) error {
	select {
	case <-c.done:
		return c.Err()
	default:
	}
	env, ok := envelope.Scan(frame)
	if !ok {
		return errors.New("remote: not a JSON object")
	}
	frame = append([]byte(nil), frame...)
	switch env.Kind() {
	case envelope.Request:
		cl := &call{id: append([]byte(nil), env.ID...), key: envelope.Key(env.ID), method: env.Method, modern: c.modernVersion(frame) != ""}
		ctx, cancel := context.WithCancel(c.ctx)
		cl.cancel = cancel
		c.mu.Lock()
		c.inflight[cl.key] = cl
		if env.Method == "initialize" {
			c.initKey = cl.key
			if c.mode == undecided && !c.probing {
				c.probing, cl.probe = true, true
			}
		}
		c.mu.Unlock()
		c.wg.Add(1)
		go func() {
			defer c.wg.Done()
			defer cancel()
			c.request(ctx, cl, frame)
			c.mu.Lock()
			// A 2024-11-05 answer comes on the event stream, after the POST.
			if c.inflight[cl.key] == cl && (cl.cancelled || c.mode != legacySSE) {
				delete(c.inflight, cl.key)
			}
			c.mu.Unlock()
		}()
		return nil
	case envelope.Notification:
		if env.Method == "notifications/cancelled" {
			if cl := c.cancelled(env.Params); cl != nil && cl.modern {
				// 2026-07-28: closing the request's stream is the
				// cancellation; no notification is sent.
				cl.cancel()
				return nil
			}
		}
		c.waitMode()
		c.send(frame, env.Method)
		if env.Method == "notifications/initialized" {
			// The GET stream is open before the next request goes, so what
			// the server sends there is not raced by the answers' streams.
			select {
			case <-c.openGetStream():
			case <-time.After(2 * time.Second):
			}
		}
		return nil
	case envelope.Response:
		c.waitMode()
		c.send(frame, "")
		return nil
	}
	return errors.New("remote: not a JSON-RPC message")
}

// cancelled marks the request a notifications/cancelled names.
func (c *Conn) cancelled(params []byte) *call {
	var p struct {
		RequestID json.RawMessage `json:"requestId"`
	}
	if json.Unmarshal(params, &p) != nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	cl := c.inflight[envelope.Key(p.RequestID)]
	if cl != nil {
		cl.cancelled = true
	}
	return cl
}

// waitMode waits until the initialize under way decided the transport.
func (c *Conn) waitMode() {
	c.mu.Lock()
	m, probing := c.mode, c.probing
	c.mu.Unlock()
	if m != undecided || !probing {
		return
	}
	select {
	case <-c.deciding:
	case <-c.done:
	case <-time.After(30 * time.Second):
	}
}

func (c *Conn) decide(m mode) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.mode == undecided {
		c.mode = m
		close(c.deciding)
	}
}

func (c *Conn) isProbing() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.probing
}

// authorize sets the bearer token (when the server needs one).
func (c *Conn) authorize(ctx context.Context, req *http.Request) (oauth.Token, error) {
	if c.o.Auth == nil {
		return oauth.Token{}, nil
	}
	tok, err := c.o.Auth.Token(ctx)
	if err != nil {
		return tok, err
	}
	if tok.Access != "" {
		req.Header.Set("Authorization", "Bearer "+tok.Access)
		c.mu.Lock()
		if len(c.sent) == 0 || c.sent[len(c.sent)-1] != tok.Access {
			c.sent = append(c.sent, tok.Access)
			if len(c.sent) > 4 {
				c.sent = c.sent[1:]
			}
		}
		c.mu.Unlock()
	}
	return tok, nil
}

// maxAuthRounds bounds the refusals one request goes through (a refresh,
// a step-up, an authorization server changed).
const maxAuthRounds = 4

// do makes a request built by build, authorized, and hands a 401 or 403
// to the Authorizer until the server accepts or the Authorizer gives up.
func (c *Conn) do(ctx context.Context, build func() (*http.Request, error)) (*http.Response, error) {
	for round := 0; ; round++ {
		req, err := build()
		if err != nil {
			return nil, err
		}
		tok, err := c.authorize(ctx, req)
		if err != nil {
			return nil, err
		}
		res, err := c.hc.Do(req)
		if err != nil {
			return nil, err
		}
		if (res.StatusCode != 401 && res.StatusCode != 403) || c.o.Auth == nil {
			return res, nil
		}
		drain(res)
		if round == maxAuthRounds {
			return nil, fmt.Errorf("%s refused the request %d times (HTTP %d)", c.o.Name, round+1, res.StatusCode)
		}
		if _, err := c.o.Auth.Challenged(ctx, tok, res.StatusCode, res.Header); err != nil {
			return nil, err
		}
	}
}

func drain(res *http.Response) {
	io.Copy(io.Discard, io.LimitReader(res.Body, 64<<10))
	res.Body.Close()
}

type methodKey struct{}

// Method is the JSON-RPC method of the request an Authorizer is asked to
// authorize for ("" for the GET stream, a legacy stream, a notification).
func Method(ctx context.Context) string {
	m, _ := ctx.Value(methodKey{}).(string)
	return m
}

// request sends one request and delivers its answer.
func (c *Conn) request(ctx context.Context, cl *call, frame []byte) {
	ctx = context.WithValue(ctx, methodKey{}, cl.method)
	c.mu.Lock()
	m, endpoint := c.mode, c.endpoint
	c.mu.Unlock()
	if m == undecided && !cl.probe && !cl.modern && c.isProbing() {
		c.waitMode()
		c.mu.Lock()
		m, endpoint = c.mode, c.endpoint
		c.mu.Unlock()
	}
	if m == legacySSE {
		c.postLegacy(ctx, endpoint, frame, cl)
		return
	}
	res, err := c.do(ctx, func() (*http.Request, error) {
		req, err := http.NewRequestWithContext(ctx, "POST", c.o.URL, bytes.NewReader(frame))
		if err == nil {
			c.headers(req, frame, cl.method)
		}
		return req, err
	})
	if err != nil {
		if ctx.Err() == nil {
			c.answerFailure(cl, err)
		}
		if m == undecided {
			c.decide(streamable)
		}
		return
	}
	defer res.Body.Close()
	if m == undecided && cl.probe && (res.StatusCode == 400 || res.StatusCode == 404 || res.StatusCode == 405) {
		body, _ := io.ReadAll(io.LimitReader(res.Body, 64<<10))
		if !isRPCError(body) {
			// No Streamable HTTP here: the 2024-11-05 transport, if the
			// server offers it (an endpoint event on a GET).
			if c.openLegacy(ctx) {
				c.mu.Lock()
				endpoint := c.endpoint
				c.mu.Unlock()
				c.postLegacy(ctx, endpoint, frame, cl)
				return
			}
		}
		c.decide(streamable)
		c.answerStatus(cl, res, body)
		return
	}
	if cl.method == "initialize" && res.StatusCode/100 == 2 {
		if sid := res.Header.Get("Mcp-Session-Id"); sid != "" {
			c.mu.Lock()
			c.session = sid
			c.mu.Unlock()
		}
	}
	if m == undecided && res.StatusCode/100 == 2 {
		c.decide(streamable)
	}
	c.mu.Lock()
	hadSession := c.session != "" && cl.method != "initialize"
	c.mu.Unlock()
	switch {
	case res.StatusCode == 404 && hadSession:
		c.answerError(cl, ErrSessionEnded.Error())
		c.log.Info("remote server ended the session", zap.String("server", c.o.Name))
		go c.end(ErrSessionEnded, false)
		return
	case res.StatusCode == 202:
		c.answerError(cl, c.o.Name+" accepted the request but sent no answer to it")
		return
	case res.StatusCode/100 != 2:
		body, _ := io.ReadAll(io.LimitReader(res.Body, 64<<10))
		c.answerStatus(cl, res, body)
		if m == undecided {
			c.decide(streamable)
		}
		return
	}
	if isEventStream(res) {
		c.stream(ctx, cl, res.Body)
		return
	}
	body, err := io.ReadAll(io.LimitReader(res.Body, int64(c.o.MaxMessage)+1))
	switch {
	case err != nil:
		if ctx.Err() == nil {
			c.answerError(cl, fmt.Sprintf("reading %s's answer: %v", c.o.Name, err))
		}
	case len(body) > c.o.MaxMessage:
		c.answerError(cl, fmt.Sprintf("%s's answer is larger than %d bytes", c.o.Name, c.o.MaxMessage))
	default:
		if !c.deliverBody(body, cl) {
			c.answerError(cl, c.o.Name+" answered something that is not a JSON-RPC response")
		}
	}
}

func isEventStream(res *http.Response) bool {
	return strings.HasPrefix(strings.ToLower(strings.TrimSpace(res.Header.Get("Content-Type"))), "text/event-stream")
}

// failure words an error of a request for its client.
func (c *Conn) failure(err error) string {
	var need *oauth.SignInNeeded
	if errors.As(err, &need) {
		return need.Error()
	}
	return fmt.Sprintf("%s could not be reached: %v", c.o.Name, err)
}

// answerFailure answers a request that could not be sent: with the
// JSON-RPC error the Authorizer gave (a URL-mode elicitation of a
// sign-in), else with CodeUnreachable and why.
func (c *Conn) answerFailure(cl *call, err error) {
	var rpc *jsonrpc.Error
	if errors.As(err, &rpc) {
		c.answerWith(cl, jsonrpc.ErrorFrame(jsonrpc.RawID(cl.id), rpc))
		return
	}
	c.answerError(cl, c.failure(err))
}

// isRPCError: the body is a JSON-RPC error response.
func isRPCError(body []byte) bool {
	env, ok := envelope.Scan(bytes.TrimSpace(body))
	return ok && env.HasError && !env.HasResult && env.Method == "" && !env.HasMethod()
}

// answerStatus answers a request the server refused with an HTTP error:
// its JSON-RPC error when it sent one (under the request's id), else one
// naming the status.
func (c *Conn) answerStatus(cl *call, res *http.Response, body []byte) {
	body = c.redact(body)
	if env, ok := envelope.Scan(bytes.TrimSpace(body)); ok && env.HasError && len(env.Error) > 0 {
		c.answerWith(cl, jsonrpc.ResponseFrame(jsonrpc.RawID(cl.id), nil, compact(env.Error)))
		return
	}
	text := strings.TrimSpace(string(body))
	if len(text) > 200 {
		text = text[:200] + "..."
	}
	msg := fmt.Sprintf("%s answered HTTP %s", c.o.Name, res.Status)
	if text != "" {
		msg += ": " + text
	}
	c.answerError(cl, msg)
}

// redact takes the credentials hearth sent (the last access tokens, the
// static headers' values) out of a server's error text before a client
// sees it.
func (c *Conn) redact(text []byte) []byte {
	c.mu.Lock()
	secrets := append([]string(nil), c.sent...)
	c.mu.Unlock()
	for _, vs := range c.o.Header {
		secrets = append(secrets, vs...)
	}
	for _, s := range secrets {
		if len(s) >= 8 {
			text = bytes.ReplaceAll(text, []byte(s), []byte("***"))
		}
	}
	return text
}

// answerError answers a request with CodeUnreachable.
func (c *Conn) answerError(cl *call, msg string) {
	e := &jsonrpc.Error{Code: CodeUnreachable, Message: msg}
	c.answerWith(cl, jsonrpc.ErrorFrame(jsonrpc.RawID(cl.id), e))
}

// answerWith delivers hearth's own answer to cl unless it has one.
func (c *Conn) answerWith(cl *call, frame []byte) {
	c.mu.Lock()
	if cl.answered {
		c.mu.Unlock()
		return
	}
	cl.answered = true
	if c.inflight[cl.key] == cl {
		delete(c.inflight, cl.key)
	}
	c.mu.Unlock()
	c.deliver(frame)
}

// deliverBody delivers a JSON body: one message, or a batch's each. It
// says whether the request's answer was among them.
func (c *Conn) deliverBody(body []byte, cl *call) bool {
	body = bytes.TrimSpace(body)
	if len(body) > 0 && body[0] == '[' {
		var batch []json.RawMessage
		if json.Unmarshal(body, &batch) != nil {
			return false
		}
		answered := false
		for _, m := range batch {
			answered = c.deliverMessage(m, cl) || answered
		}
		return answered
	}
	return c.deliverMessage(body, cl)
}

// deliverMessage delivers one message of the server's; it says whether it
// is the answer to cl.
func (c *Conn) deliverMessage(msg []byte, cl *call) bool {
	env, ok := envelope.Scan(msg)
	if !ok || env.Kind() == envelope.Invalid {
		c.log.Warn("remote server sent something that is not JSON-RPC; skipped", zap.String("server", c.o.Name))
		return false
	}
	answer := cl != nil && env.Kind() == envelope.Response && envelope.Key(env.ID) == cl.key
	if env.Kind() == envelope.Response {
		c.mu.Lock()
		k := envelope.Key(env.ID)
		p := c.inflight[k]
		if p == nil || p.answered {
			// Answered already (on another stream, then again on a
			// resumed one), or never asked: a client gets one answer.
			c.mu.Unlock()
			return answer
		}
		p.answered = true
		delete(c.inflight, k)
		if p.method == "tools/list" && (p.modern || c.protocol >= "2026-07-28") && env.HasResult {
			c.mu.Unlock()
			msg = c.learnTools(msg)
			c.mu.Lock()
		}
		if c.initKey != "" && envelope.Key(env.ID) == c.initKey {
			c.initKey = ""
			var r struct {
				Result struct {
					ProtocolVersion string `json:"protocolVersion"`
				} `json:"result"`
			}
			if json.Unmarshal(msg, &r) == nil {
				c.protocol = r.Result.ProtocolVersion
			}
		}
		c.mu.Unlock()
	}
	c.deliver(msg)
	return answer
}

// deliver writes one frame to Stdout on a line of its own.
func (c *Conn) deliver(msg []byte) {
	line := compact(msg)
	line = append(line[:len(line):len(line)], '\n')
	c.outW.Write(line)
}

// compact makes a message one line (a pretty-printed one included).
func compact(msg []byte) []byte {
	if bytes.IndexByte(msg, '\n') < 0 && bytes.IndexByte(msg, '\r') < 0 {
		return bytes.TrimSpace(msg)
	}
	var b bytes.Buffer
	if json.Compact(&b, msg) != nil {
		return bytes.ReplaceAll(bytes.ReplaceAll(msg, []byte("\r"), nil), []byte("\n"), nil)
	}
	return b.Bytes()
}

// stream reads a POST's event stream until the request's answer; a 2025
// stream cut before it is resumed with GET and Last-Event-ID.
func (c *Conn) stream(ctx context.Context, cl *call, body io.ReadCloser) {
	lastID, retry := "", time.Second
	for attempt := 0; ; attempt++ {
		answered, id, r := c.readEvents(body, cl)
		body.Close()
		if id != "" {
			lastID = id
		}
		if r > 0 {
			retry = r
		}
		if answered || ctx.Err() != nil {
			return
		}
		c.mu.Lock()
		done := cl.cancelled || cl.answered
		c.mu.Unlock()
		if done {
			return
		}
		if cl.modern || lastID == "" || attempt >= 5 {
			c.answerError(cl, c.o.Name+" closed its stream before answering")
			return
		}
		select {
		case <-time.After(retry):
		case <-ctx.Done():
			return
		}
		res, err := c.do(ctx, func() (*http.Request, error) {
			req, err := http.NewRequestWithContext(ctx, "GET", c.o.URL, nil)
			if err == nil {
				c.headers(req, nil, "")
				req.Header.Set("Accept", "text/event-stream")
				req.Header.Set("Last-Event-ID", lastID)
				if s := c.Session(); s != "" {
					req.Header.Set("Mcp-Session-Id", s)
				}
			}
			return req, err
		})
		if err != nil || res.StatusCode != 200 || !isEventStream(res) {
			if err == nil {
				drain(res)
			}
			if ctx.Err() == nil {
				c.answerError(cl, c.o.Name+" closed its stream before answering, and it could not be resumed")
			}
			return
		}
		body = res.Body
	}
}

// readEvents delivers a stream's messages until it ends or the answer to
// cl came; it returns whether it did, the last event id and retry.
func (c *Conn) readEvents(body io.Reader, cl *call) (answered bool, lastID string, retry time.Duration) {
	r := newSSEReader(body, c.o.MaxMessage)
	for {
		ev, err := r.next()
		if err == errEventTooLarge {
			c.log.Warn("remote server sent an event over the limit; skipped", zap.String("server", c.o.Name), zap.Int("limit", c.o.MaxMessage))
			if cl != nil {
				c.answerError(cl, fmt.Sprintf("%s sent a message larger than %d bytes", c.o.Name, c.o.MaxMessage))
				return true, lastID, retry
			}
			continue
		}
		if err != nil {
			return false, lastID, retry
		}
		if ev.hasID {
			lastID = ev.ID
		}
		if ev.Retry > 0 {
			retry = ev.Retry
		}
		if len(bytes.TrimSpace(ev.Data)) == 0 || ev.Name != "message" {
			continue
		}
		if c.deliverMessage(ev.Data, cl) {
			return true, lastID, retry
		}
	}
}

// send posts a notification or a response (202 expected).
func (c *Conn) send(frame []byte, method string) {
	c.mu.Lock()
	m, endpoint := c.mode, c.endpoint
	c.mu.Unlock()
	ctx, cancel := context.WithTimeout(c.ctx, 30*time.Second)
	defer cancel()
	target := c.o.URL
	if m == legacySSE {
		target = endpoint
	}
	res, err := c.do(ctx, func() (*http.Request, error) {
		req, err := http.NewRequestWithContext(ctx, "POST", target, bytes.NewReader(frame))
		if err == nil {
			c.headers(req, frame, method)
		}
		return req, err
	})
	if err != nil {
		c.log.Warn("remote server did not take a message", zap.String("server", c.o.Name), zap.String("method", method), zap.Error(err))
		return
	}
	defer drain(res)
	if res.StatusCode/100 != 2 {
		c.log.Warn("remote server refused a message", zap.String("server", c.o.Name), zap.String("method", method), zap.Int("status", res.StatusCode))
	}
}

// openGetStream opens the 2025 session's GET stream once, for the
// server's own requests and notifications, and keeps it open.
// The channel is closed once the first GET was answered.
func (c *Conn) openGetStream() <-chan struct{} {
	opened := make(chan struct{})
	c.mu.Lock()
	if c.getOpen || c.mode != streamable || c.protocol == "" {
		c.mu.Unlock()
		close(opened)
		return opened
	}
	c.getOpen = true
	c.mu.Unlock()
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		var once sync.Once
		defer once.Do(func() { close(opened) })
		lastID, retry, fails := "", time.Second, 0
		for c.ctx.Err() == nil && fails < 5 {
			res, err := c.do(c.ctx, func() (*http.Request, error) {
				req, err := http.NewRequestWithContext(c.ctx, "GET", c.o.URL, nil)
				if err == nil {
					c.headers(req, nil, "")
					req.Header.Set("Accept", "text/event-stream")
					if s := c.Session(); s != "" {
						req.Header.Set("Mcp-Session-Id", s)
					}
					if lastID != "" {
						req.Header.Set("Last-Event-ID", lastID)
					}
				}
				return req, err
			})
			once.Do(func() { close(opened) })
			if err != nil {
				fails++
			} else if res.StatusCode == 405 {
				drain(res)
				return // the server offers no GET stream
			} else if res.StatusCode == 404 && c.Session() != "" {
				drain(res)
				go c.end(ErrSessionEnded, false)
				return
			} else if res.StatusCode != 200 || !isEventStream(res) {
				drain(res)
				fails++
			} else {
				_, id, r := c.readEvents(res.Body, nil)
				res.Body.Close()
				if id != "" {
					lastID = id
				}
				if r > 0 {
					retry = r
				}
				fails = 0
			}
			select {
			case <-time.After(retry << min(fails, 4)):
			case <-c.ctx.Done():
			}
		}
	}()
	return opened
}

// lineWriter splits newline-delimited frames for Write.
type lineWriter struct {
	c     *Conn
	limit int
	buf   []byte
}

func (w *lineWriter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			if len(w.buf)+len(p) > w.limit {
				w.buf = nil
				return n, fmt.Errorf("remote: a frame longer than %d bytes", w.limit)
			}
			w.buf = append(w.buf, p...)
			break
		}
		line := append(w.buf, p[:i]...)
		w.buf = nil
		p = p[i+1:]
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		if err := w.c.Write(bytes.TrimSpace(line), ""); err != nil {
			return n, err
		}
	}
	return n, nil
}

// Close ends the Conn, as closing a child's stdin ends it.
func (w *lineWriter) Close() error { return w.c.Close() }
