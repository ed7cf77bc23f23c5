package route

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/hearth-mcp/hearth/pkg/envelope"
	"github.com/hearth-mcp/hearth/pkg/jsonrpc"
)

// The era of the upstream, learned once per upstream process
// (decision 0038): it is sent initialize first, as every legacy server
// expects; only one that refuses it is probed with server/discover.
const (
	eraUnknown = iota
	eraLegacy  // answered initialize
	eraModern  // refused initialize, answered server/discover with 2026-07-28
)

// modernVersion is the one stateless protocol version hearth speaks to an
// upstream and translates for its legacy clients.
const modernVersion = "2026-07-28"

// legacyVersions are the handshake versions hearth negotiates with a legacy
// client of a modern upstream, newest first.
var legacyVersions = []string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}

// The reserved _meta keys of 2026-07-28 requests and results.
const (
	metaVersion      = "io.modelcontextprotocol/protocolVersion"
	metaCapabilities = "io.modelcontextprotocol/clientCapabilities"
	metaClientInfo   = "io.modelcontextprotocol/clientInfo"
	metaLogLevel     = "io.modelcontextprotocol/logLevel"
	metaServerInfo   = "io.modelcontextprotocol/serverInfo"
	metaSubscription = "io.modelcontextprotocol/subscriptionId"
)

// probeDiscover asks an upstream that refused initialize whether it speaks
// 2026-07-28; r.mu is held.
func (r *Router) probeDiscover() {
	r.nextID++
	id := strconv.AppendInt(nil, r.nextID, 10)
	r.initID = envelope.Key(id)
	r.pending[r.initID] = &pend{method: "server/discover", internal: r.discovered}
	params := mustJSON(map[string]any{"_meta": metaFromInit(r.initParams, -1)})
	r.sendUp(jsonrpc.RequestFrame(jsonrpc.RawID(id), "server/discover", params))
}

// discovered handles the probe's answer: a valid DiscoverResult naming
// 2026-07-28 makes the upstream modern; anything else fails the start,
// quoting both refusals; r.mu is held.
func (r *Router) discovered(result, errObj json.RawMessage) {
	r.initID = ""
	why := ""
	if errObj != nil {
		why = "server/discover: " + errorMessage(errObj)
	} else if err := checkDiscover(result); err != nil {
		why = err.Error()
	}
	if why != "" {
		msg := fmt.Sprintf("%s refused initialize (%s) and is no 2026-07-28 server either (%s)", r.opts.Name, errorMessage(r.refusal), why)
		r.failStart(rpcError(CodeUpstream, r.UpstreamError("%s", msg).Error()), fmt.Errorf("%s", msg))
		return
	}
	r.era = eraModern
	r.discover, r.initResult = result, nil
	r.upCaps = parseUpstreamCaps(result)
	r.becomeReady()
}

// Awaiting names what a starting upstream has not answered yet, for the
// error given when it never does: "initialize", or the probe that followed
// its refusal.
func (r *Router) Awaiting() string {
	r.mu.Lock()
	defer r.unlock()
	if p := r.pending[r.initID]; p != nil && p.method == "server/discover" {
		return "server/discover after refusing initialize (" + errorMessage(r.refusal) + ")"
	}
	return "initialize"
}

// checkDiscover validates an upstream's DiscoverResult: supportedVersions
// (strings) must name 2026-07-28, capabilities must be an object.
func checkDiscover(result json.RawMessage) error {
	o, ok := decodeObject(result)
	if !ok {
		return fmt.Errorf("its server/discover result is not an object: %.80s", result)
	}
	var versions []string
	if json.Unmarshal(o["supportedVersions"], &versions) != nil || versions == nil {
		return fmt.Errorf("its server/discover result has no supportedVersions list of strings")
	}
	if !slices.Contains(versions, modernVersion) {
		return fmt.Errorf("it supports %s, and hearth speaks %s to upstreams", strings.Join(versions, ", "), modernVersion)
	}
	if _, ok := decodeObject(o["capabilities"]); !ok {
		return fmt.Errorf("its server/discover result has no capabilities object")
	}
	return nil
}

// legacyInitResult is the initialize result a legacy client of a modern
// upstream gets, made from the upstream's DiscoverResult: its capabilities,
// serverInfo and instructions, and the protocol version negotiated as the
// 2025 handshake does (the client's own when hearth knows it, else the
// newest).
func legacyInitResult(discover, clientParams json.RawMessage, name string) json.RawMessage {
	d, _ := decodeObject(discover)
	var p struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	_ = json.Unmarshal(clientParams, &p)
	version := legacyVersions[0]
	if slices.Contains(legacyVersions, p.ProtocolVersion) {
		version = p.ProtocolVersion
	}
	out := object{"protocolVersion": quote(version), "capabilities": json.RawMessage(`{}`)}
	if caps, ok := decodeObject(d["capabilities"]); ok {
		out["capabilities"] = caps.encode()
	}
	out["serverInfo"] = mustJSON(map[string]string{"name": name, "version": "unknown"})
	if meta, ok := decodeObject(d["_meta"]); ok {
		if info := implementation(meta[metaServerInfo]); info != nil {
			out["serverInfo"] = info
		}
	}
	var instr string
	if json.Unmarshal(d["instructions"], &instr) == nil && instr != "" {
		out["instructions"] = quote(instr)
	}
	return out.encode()
}

// implementation returns raw when it is an Implementation ({name, version}
// strings), else nil.
func implementation(raw json.RawMessage) json.RawMessage {
	var impl struct {
		Name    *string `json:"name"`
		Version *string `json:"version"`
	}
	if json.Unmarshal(raw, &impl) != nil || impl.Name == nil || impl.Version == nil {
		return nil
	}
	return raw
}

// metaFromInit is the 2026-07-28 _meta of a request made on behalf of a
// client that opened with initialize: the version, its capabilities and
// clientInfo from those initialize params, and its log level (level < 0:
// none). An ill-typed member of the params is left out (capabilities
// become {}): the client's request still goes, as the upstream would have
// taken a lenient initialize.
func metaFromInit(initParams json.RawMessage, level int) object {
	p, _ := decodeObject(initParams)
	m := object{metaVersion: quote(modernVersion), metaCapabilities: json.RawMessage(`{}`)}
	if caps, ok := decodeObject(p["capabilities"]); ok {
		m[metaCapabilities] = caps.encode()
	}
	if info := implementation(p["clientInfo"]); info != nil {
		m[metaClientInfo] = info
	}
	if level >= 0 {
		m[metaLogLevel] = quote(levelNames[level])
	}
	return m
}

// withModernMeta returns a legacy client's request params with the
// 2026-07-28 _meta made of its initialize and log level (metaFromInit).
// The members are made once per initialize or level; params without a
// _meta of their own get them spliced in as text, without decoding them.
func (c *Client) withModernMeta(params json.RawMessage) json.RawMessage {
	if c.metaMembers == nil {
		enc := metaFromInit(c.initParams, c.level).encode()
		c.metaMembers = enc[1 : len(enc)-1]
	}
	p := bytes.TrimSpace(params)
	if len(p) == 0 || string(p) == "null" {
		p = []byte("{}")
	}
	if p[0] != '{' || bytes.Contains(p, []byte(`"_meta"`)) {
		set, _ := decodeObject(append(append([]byte{'{'}, c.metaMembers...), '}'))
		return withMeta(params, set)
	}
	rest := bytes.TrimSpace(p[1:])
	b := make([]byte, 0, len(p)+len(c.metaMembers)+16)
	b = append(b, `{"_meta":{`...)
	b = append(b, c.metaMembers...)
	b = append(b, '}')
	if len(rest) > 0 && rest[0] != '}' {
		b = append(b, ',')
	}
	return append(b, rest...)
}

// initParamsFromMeta are initialize params made from a modern request's
// _meta, for an upstream that turns out to be legacy when a modern client
// came first.
func initParamsFromMeta(params json.RawMessage) json.RawMessage {
	meta := modernMeta(params)
	out := object{"protocolVersion": quote(legacyVersions[0]), "capabilities": json.RawMessage(`{}`),
		"clientInfo": mustJSON(map[string]string{"name": "hearth", "version": "unknown"})}
	if caps, ok := decodeObject(meta[metaCapabilities]); ok {
		out["capabilities"] = caps.encode()
	}
	if info := implementation(meta[metaClientInfo]); info != nil {
		out["clientInfo"] = info
	}
	return out.encode()
}

// modernMeta is params._meta when it carries the 2026-07-28 version key
// (nil otherwise): such a request was made by a modern client.
func modernMeta(params json.RawMessage) object {
	if !strings.Contains(string(params), metaVersion) {
		return nil
	}
	_, meta, ok := metaOf(params)
	if !ok {
		return nil
	}
	if _, ok := meta[metaVersion]; !ok {
		return nil
	}
	return meta
}

// withMeta returns params with the given _meta members set over its own
// (progressToken and the rest are kept).
func withMeta(params json.RawMessage, set object) json.RawMessage {
	p, ok := decodeObject(params)
	if !ok {
		if len(params) != 0 && string(params) != "null" {
			return params // not an object: the upstream words the error
		}
		p = object{}
	}
	meta, ok := decodeObject(p["_meta"])
	if !ok {
		meta = object{}
	}
	for k, v := range set {
		meta[k] = v
	}
	p["_meta"] = meta.encode()
	return p.encode()
}
