package route

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/hearth-mcp/hearth/pkg/envelope"
	"github.com/hearth-mcp/hearth/pkg/jsonrpc"
)

// A modern upstream asks for sampling, elicitation or roots by answering a
// request with an InputRequiredResult; a legacy client knows only the
// server-to-client requests. hearth sends each input request to the client
// whose request it answers (certain: it belongs to that request, so
// decision 0035's refusal never applies), gathers the answers, and retries
// the request with inputResponses (and requestState), under a new id of
// its own; the client sees one request and one answer (decision 0038).

// maxInputRounds bounds the retries of one request: an upstream that keeps
// asking for input is given up.
const maxInputRounds = 10

// inputPart is what a legacy client's request to a modern upstream holds
// for input rounds: whether it was translated (only such a request is
// answered with rounds), what was sent, to retry it with inputResponses,
// and the round in progress, if the upstream asked for input.
type inputPart struct {
	translated bool
	sent       json.RawMessage
	round      *inputRound
	rounds     int
}

// inputRound is one InputRequiredResult being answered by the client.
type inputRound struct {
	upKey string          // the upstream id key the request was answered under
	state json.RawMessage // requestState to echo (nil: none)
	want  int
	got   object // answers by input key
	s2c   []string
}

// inputRequired: a result whose resultType is "input_required" (most
// results are told apart without decoding them).
func inputRequired(result json.RawMessage) bool {
	if !bytes.Contains(result, []byte(`"input_required"`)) {
		return false
	}
	var r struct {
		ResultType string `json:"resultType"`
	}
	return json.Unmarshal(result, &r) == nil && r.ResultType == "input_required"
}

// askForInput sends the client the requests of an InputRequiredResult to
// its request p (in flight under upKey); a malformed one answers the client
// with an error instead; r.mu is held.
func (r *Router) askForInput(upKey string, p *pend, result json.RawMessage) {
	c := p.c
	reqs, state, err := parseInputRequired(result, p)
	if err == nil {
		for _, in := range reqs {
			if missing := c.session.lacks(in.Method); missing != "" {
				err = fmt.Errorf("asked for %s (%s), a capability the client did not declare", in.Method, missing)
				break
			}
		}
	}
	if err != nil {
		r.endRound(upKey, p, rpcError(jsonrpc.CodeInternalError, "hearth: "+r.opts.Name+" answered "+p.method+
			" with an InputRequiredResult hearth cannot use: "+err.Error()))
		return
	}
	p.input.rounds++
	round := &inputRound{upKey: upKey, state: state, want: len(reqs), got: object{}}
	p.input.round = round
	if len(reqs) == 0 {
		r.retry(p) // requestState only: retried at once
		return
	}
	for _, in := range reqs {
		s := &s2cReq{c: c, round: round, key: in.key, method: in.Method, re: envelope.Key(p.id)}
		cid, k := r.s2c.add(s)
		round.s2c = append(round.s2c, k)
		c.pushFor(jsonrpc.RequestFrame(jsonrpc.RawID(cid), in.Method, in.Params), s.re) // it goes with the request it is for
	}
}

type inputReq struct {
	key    string
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

// parseInputRequired checks an InputRequiredResult: inputRequests an object
// of {method, params} requests hearth can send a client, requestState a
// string, at least one of them, within maxInputRounds.
func parseInputRequired(result json.RawMessage, p *pend) ([]inputReq, json.RawMessage, error) {
	o, _ := decodeObject(result)
	if p.input.rounds >= maxInputRounds {
		return nil, nil, fmt.Errorf("it asked for input %d times for one request", maxInputRounds)
	}
	var state json.RawMessage
	if raw, ok := o["requestState"]; ok {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return nil, nil, fmt.Errorf("requestState is not a string")
		}
		state = raw
	}
	raw, ok := o["inputRequests"]
	if !ok {
		if state == nil {
			return nil, nil, fmt.Errorf("it has neither inputRequests nor requestState")
		}
		return nil, state, nil
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil || m == nil {
		return nil, nil, fmt.Errorf("inputRequests is not an object")
	}
	var reqs []inputReq
	for key, v := range m {
		in := inputReq{key: key}
		if json.Unmarshal(v, &in) != nil {
			return nil, nil, fmt.Errorf("inputRequests[%q] is not a request object", key)
		}
		switch in.Method {
		case "sampling/createMessage", "elicitation/create", "roots/list":
		default:
			return nil, nil, fmt.Errorf("inputRequests[%q] has method %q (sampling/createMessage, elicitation/create or roots/list expected)", key, in.Method)
		}
		if len(in.Params) == 0 || string(in.Params) == "null" {
			in.Params = nil
		} else if _, ok := decodeObject(in.Params); !ok {
			return nil, nil, fmt.Errorf("inputRequests[%q].params is not an object", key)
		}
		reqs = append(reqs, in)
	}
	if len(reqs) == 0 && state == nil {
		return nil, nil, fmt.Errorf("its inputRequests is empty and it has no requestState")
	}
	sort.Slice(reqs, func(i, j int) bool { return reqs[i].key < reqs[j].key })
	return reqs, state, nil
}

// inputAnswered takes the client's answer to one input request; the last
// one retries the request. An error answer ends the request with that
// error: inputResponses carry results only; r.mu is held.
func (r *Router) inputAnswered(s *s2cReq, msg *jsonrpc.Message) {
	round := s.round
	p := r.flight.get(round.upKey)
	if p == nil || p.input.round != round || p.c == nil {
		return // the request was cancelled or its upstream is gone
	}
	if msg.Error != nil {
		r.endRound(round.upKey, p, msg.Error)
		return
	}
	result := msg.Result
	if result == nil {
		result = json.RawMessage(`{}`)
	}
	round.got[s.key] = result
	if len(round.got) == round.want {
		r.retry(p)
	}
}

// retry sends the request again with the round's answers, under a new
// upstream id; the client's id and progress token stay as they were; r.mu
// is held.
func (r *Router) retry(p *pend) {
	round := p.input.round
	p.input.round = nil
	params, _ := decodeObject(p.input.sent)
	if params == nil {
		params = object{}
	}
	delete(params, "inputResponses")
	delete(params, "requestState")
	if len(round.got) > 0 {
		params["inputResponses"] = round.got.encode()
	}
	if round.state != nil {
		params["requestState"] = round.state
	}
	id, upKey := r.flight.move(round.upKey, p)
	p.c.inflight[p.clientK] = upKey
	r.sendUp(jsonrpc.RequestFrame(jsonrpc.RawID(id), p.method, params.encode()))
}

// endRound answers the client's request with errObj and forgets it; r.mu
// is held.
func (r *Router) endRound(upKey string, p *pend, errObj json.RawMessage) {
	c := p.c
	r.dropRound(upKey, p)
	if c != nil && !c.gone {
		delete(c.inflight, p.clientK)
		c.push(jsonrpc.ResponseFrame(jsonrpc.RawID(p.id), nil, errObj))
	}
}

// dropRound forgets a request waiting for its client's input (cancelled,
// its client gone, or ended): the client's outstanding input requests are
// forgotten too; r.mu is held.
func (r *Router) dropRound(upKey string, p *pend) {
	r.flight.remove(upKey)
	if p.input.round != nil {
		for _, k := range p.input.round.s2c {
			r.s2c.take(k)
		}
		p.input.round = nil
	}
}
