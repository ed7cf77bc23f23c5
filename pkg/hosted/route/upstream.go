package route

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/hearth-mcp/hearth/pkg/envelope"
	"github.com/hearth-mcp/hearth/pkg/jsonrpc"
	"github.com/hearth-mcp/hearth/pkg/jsonval"
)

// What the upstream sends: answers to the requests in flight, returned to
// whoever made them; its own requests (s2c.go); its notifications, routed
// by the table of methods (methods.go).

// ErrNotJSONRPC: a line of the upstream's stdout is not a JSON-RPC message.
var ErrNotJSONRPC = errors.New("not a JSON-RPC message")

// ErrInvalidResponse: a line of the upstream's stdout answered a request
// in flight but is no valid JSON-RPC response; the request was answered
// with an error saying so in its place.
var ErrInvalidResponse = errors.New("an invalid response")

// FromUpstream routes one line the upstream wrote. A line that is not
// JSON-RPC (a server printing to stdout) is not routed: the error says so,
// and the instance decides what that means. A line that answers a request
// in flight but is no valid response (an error that is no JSON-RPC error
// object, neither or both of result and error) is not passed on either: the
// request is answered with an error saying so, and the returned error
// (ErrInvalidResponse) is for the instance's log.
func (r *Router) FromUpstream(line []byte) error {
	if msg, ok := jsonrpc.ParseResponse(line); ok {
		// A reply is passed on as it is, under its client's id: its
		// envelope is all that is read (decision 0011).
		r.mu.Lock()
		defer r.unlock()
		if r.link.out == nil {
			return nil
		}
		return r.upstreamResponse(msg)
	}
	msg, perr := jsonrpc.Parse(line)
	if perr != nil {
		r.mu.Lock()
		defer r.unlock()
		e := envelope.ScanHead(line)
		if e.FirstID != nil {
			// Two ids: whichever request it meant, it is no answer to
			// either. Each request in flight it names is answered at once
			// with an error rather than left to its timeout.
			return r.answerRepeatedID(e, line)
		}
		if k, ok := r.answering(e); ok {
			why := perr.Err.Message
			switch {
			case e.HasResult && e.HasError:
				why = "it has both result and error"
			case !e.HasResult && !e.HasError:
				why = "it has neither result nor error"
			}
			return r.answerInvalid(k, why+": "+shortText(line))
		}
		return ErrNotJSONRPC
	}
	r.mu.Lock()
	defer r.unlock()
	if r.link.out == nil {
		return nil
	}
	switch msg.Kind {
	case jsonrpc.Response:
		return r.upstreamResponse(msg)
	case jsonrpc.Request:
		r.upstreamRequest(msg)
	case jsonrpc.Notification:
		if route := upstreamNotes[msg.Method]; route != nil {
			route(r, msg)
		} else {
			r.broadcast(msg)
		}
	}
	return nil
}

// answerRepeatedID answers every request in flight that a frame writing
// its id twice names (the first id and the last) with an error saying so;
// r.mu is held. The frame is nobody's answer: JSON leaves a repeated
// name's meaning to the parser.
func (r *Router) answerRepeatedID(e envelope.Envelope, line []byte) error {
	why := fmt.Sprintf("it writes its id twice (%s and %s): %s", shortText(e.FirstID), shortText(e.ID), shortText(line))
	var err error
	for _, id := range [][]byte{e.FirstID, e.ID} {
		e.ID = id
		if k, ok := r.answering(e); ok {
			err = r.answerInvalid(k, why)
		}
	}
	if err == nil {
		return fmt.Errorf("%w: %s", ErrInvalidResponse, why)
	}
	return err
}

// answering says which request in flight a frame of the upstream that
// could not be routed as it is answers, going by its envelope: it has an
// id that is one of a request in flight and no method member (a frame with
// a method is a request or notification of the upstream's own, whose id is
// in the upstream's id space, not hearth's); r.mu is held.
func (r *Router) answering(e envelope.Envelope) (string, bool) {
	if r.link.out == nil || e.ID == nil || e.HasMethod() {
		return "", false
	}
	k := envelope.Key(e.ID)
	return k, r.flight.get(k) != nil
}

// TooLarge is told of a line of the upstream's stdout longer than limit
// bytes, which the instance dropped; head is the line's first bytes. When
// the head shows the line is a response (a result or error member) to a
// request in flight, and its id comes before that member, as JSON-RPC
// libraries write it, the request is answered with an error naming the
// limit; otherwise the request, if any, stays in flight (until the client
// cancels it or the upstream exits). The error returned says which it was,
// for the instance's log.
func (r *Router) TooLarge(head []byte, limit int) error {
	e := envelope.ScanHead(head)
	r.mu.Lock()
	defer r.unlock()
	size := humanBytes(limit)
	if k, ok := r.answering(e); ok && (e.HasResult || e.HasError) {
		method := r.flight.get(k).method
		r.settle(k, nil, rpcError(jsonrpc.CodeInternalError,
			r.opts.Name+"'s reply to "+method+" was larger than hearth's "+size+" limit for one line of a hosted server's output, so it was dropped"))
		return fmt.Errorf("a line of stdout over %s was dropped: the reply to %s, answered to its client with an error", size, method)
	}
	return fmt.Errorf("a line of stdout over %s was dropped (no request in flight could be read from its start: %s)", size, shortText(head))
}

// humanBytes words a size: "64 MiB", or bytes when it is no whole number
// of MiB or KiB.
func humanBytes(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return strconv.Itoa(n>>20) + " MiB"
	case n >= 1<<10 && n%(1<<10) == 0:
		return strconv.Itoa(n>>10) + " KiB"
	}
	return strconv.Itoa(n) + " bytes"
}

// upstreamResponse returns an answer to the client whose request it is,
// under the client's own id; r.mu is held.
func (r *Router) upstreamResponse(msg *jsonrpc.Message) error {
	k := envelope.Key(msg.ID.Raw())
	if r.flight.get(k) == nil {
		return nil // an answer to nothing in flight (or to a cancelled request of a gone client)
	}
	if why := badErrorObject(msg.Error); why != "" {
		return r.answerInvalid(k, why)
	}
	r.settle(k, msg.Result, msg.Error)
	return nil
}

// settle hands the answer to the request in flight under upstream id key k
// to whoever made it; r.mu is held.
func (r *Router) settle(k string, result, errObj json.RawMessage) {
	p := r.flight.get(k)
	if p == nil {
		return
	}
	if p.input.translated && p.c != nil && !p.c.gone && errObj == nil && inputRequired(result) {
		r.askForInput(k, p, result) // the request stays the client's
		return
	}
	if r.parkedAnswer(k, p, result, errObj) {
		return // its client's retry gets it (bridge.go)
	}
	r.flight.remove(k)
	if p.internal != nil {
		p.internal(result, errObj)
		return
	}
	if p.c == nil || p.c.gone {
		return
	}
	delete(p.c.inflight, p.clientK)
	if p.method == "tools/list" && errObj == nil {
		result = sortedTools(result) // one order for every client (order.go)
	}
	if p.list.key != "" && errObj == nil {
		r.lists.put(p.list.key, p.list.gen, result)
	}
	if p.uri != "" && errObj != nil {
		r.subscribeRefused(p.c, p.uri)
	}
	p.c.push(jsonrpc.ResponseFrame(jsonrpc.RawID(p.id), answerFor(p.c, r, p.method, result, errObj), errObj))
}

// answerInvalid answers the request in flight under upstream id key k with
// an error saying the upstream's response to it was invalid (why), so its
// client gets a valid JSON-RPC error in place of the malformed frame, and
// returns the error for the instance's log; r.mu is held.
func (r *Router) answerInvalid(k, why string) error {
	method := r.flight.get(k).method
	r.settle(k, nil, rpcError(jsonrpc.CodeInternalError, r.opts.Name+" sent an invalid response to "+method+": "+why))
	return fmt.Errorf("%w to %s (answered to its client as an error): %s", ErrInvalidResponse, method, why)
}

// badErrorObject says what is wrong with a response's error member ("" when
// it is absent or is an object with an integer code and a string message,
// as JSON-RPC 2.0 requires).
func badErrorObject(errObj json.RawMessage) string {
	if errObj == nil {
		return ""
	}
	o, ok := decodeObject(errObj)
	if !ok {
		return "its error is " + shortText(errObj) + ", not an object"
	}
	var code int64
	if c, ok := o["code"]; !ok || isNull(c) || json.Unmarshal(c, &code) != nil {
		return "its error has no integer code: " + shortText(errObj)
	}
	var msg string
	if m, ok := o["message"]; !ok || isNull(m) || json.Unmarshal(m, &msg) != nil {
		return "its error has no string message: " + shortText(errObj)
	}
	return ""
}

// progressNote passes the upstream's progress on to the client of the
// request hearth gave its token, under the client's own token; r.mu is
// held.
func (r *Router) progressNote(msg *jsonrpc.Message) {
	doc := msg.ParamsDoc()
	if doc == nil || doc.Root().Kind() != jsonval.Object {
		return
	}
	tok := doc.Get(doc.Root(), "progressToken")
	if tok == nil || tok.Kind() != jsonval.String {
		return
	}
	p := r.flight.byTok(doc.Str(tok))
	if p == nil || p.c == nil || p.isParked() {
		return // a token hearth never gave, or of a request already answered
	}
	params := writeObject(doc, doc.Root(), []member{{"progressToken", p.progress.client}}, nil)
	p.c.pushFor(jsonrpc.RawNotificationFrame(msg.Method, params), envelope.Key(p.id))
}

// resourceUpdatedNote delivers a resource's update to the clients
// subscribed to it (a single client's upstream: to its client); r.mu is
// held.
func (r *Router) resourceUpdatedNote(msg *jsonrpc.Message) {
	if r.era.kind == eraModern {
		r.resourceUpdated(msg)
		return
	}
	if r.opts.Mode == Single {
		// The upstream's one client: as it is to a 2025 one, on the
		// listens that name the URI to a 2026-07-28 one.
		for c := range r.clients.set {
			if !c.session.modern {
				c.push(jsonrpc.RawNotificationFrame(msg.Method, msg.Params))
			}
		}
		r.resourceUpdatedOnListens(msg.Params)
		return
	}
	r.resourceUpdated(msg)
}

// listChangedNote: a list changed; its cached answers go, and its clients
// are told; r.mu is held.
func (r *Router) listChangedNote(msg *jsonrpc.Message) {
	r.lists.changed()
	r.listChanged(msg) // to 2025 clients as it is, to 2026-07-28 ones on their listens
}

func (r *Router) broadcast(msg *jsonrpc.Message) {
	f := jsonrpc.RawNotificationFrame(msg.Method, msg.Params)
	for c := range r.clients.set {
		c.push(f)
	}
}

// logMessage sends a log message to the client it belongs to, when that is
// certain (the only client with a request in flight), else to every client;
// each gets it only if its own level lets it through; r.mu is held.
func (r *Router) logMessage(msg *jsonrpc.Message) {
	p, _ := decodeObject(msg.Params)
	lvl := levelOf(p.str("level"))
	f := jsonrpc.RawNotificationFrame(msg.Method, msg.Params)
	deliver := func(c *Client, re string) {
		level := c.session.level
		if r.era.kind == eraModern && !c.session.modern && level < 0 {
			return // it asked for no log: a modern upstream logs only for requests that set a level
		}
		if c.session.modern && r.era.kind == eraLegacy && level < 0 {
			return // its requests name no log level: 2026-07-28 sends it none (bridge.go)
		}
		if level < 0 || lvl < 0 || lvl >= level {
			c.pushFor(f, re)
		}
	}
	if r.opts.Mode == Shared {
		if c, _ := r.causingClient(); c != nil {
			deliver(c, c.aRequest()) // about its request: it goes with it
			return
		}
		for c := range r.clients.set {
			deliver(c, "") // whose it is is not certain: nobody's request
		}
		return
	}
	for c := range r.clients.set {
		deliver(c, c.aRequest())
	}
}
