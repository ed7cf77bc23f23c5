package mcp

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"

	"github.com/hearth-mcp/hearth/pkg/jsonrpc"
	"github.com/hearth-mcp/hearth/pkg/jsonval"
	"github.com/hearth-mcp/hearth/pkg/tool"
)

// The two protocol eras a connection may speak (docs/protocol.md, decision
// 0016). The era is fixed by the first request that decides it: initialize
// opens a legacy session; a request carrying the protocol version in its
// _meta opens a modern (stateless) connection. Plain tool methods decide
// nothing: they are served alike in every era.
const (
	eraNone int32 = iota
	eraLegacy
	eraModern
)

// ModernVersions are the stateless protocol versions this server speaks,
// newest first: those a request's _meta may name, and those server/discover
// lists. The legacy ones (ProtocolVersions) are reached through initialize.
var ModernVersions = []string{"2026-07-28"}

// The reserved _meta keys of the modern era.
const (
	metaProtocolVersion    = "io.modelcontextprotocol/protocolVersion"
	metaClientInfo         = "io.modelcontextprotocol/clientInfo"
	metaClientCapabilities = "io.modelcontextprotocol/clientCapabilities"
	metaLogLevel           = "io.modelcontextprotocol/logLevel"
	metaServerInfo         = "io.modelcontextprotocol/serverInfo"
	metaSubscriptionID     = "io.modelcontextprotocol/subscriptionId"
)

// Error codes of the modern era.
const (
	codeMissingCapability  = -32021 // MissingRequiredClientCapabilityError
	codeUnsupportedVersion = -32022 // UnsupportedProtocolVersionError
)

// Caching hints of the modern era's cacheable results (tools/list,
// resources/*, server/discover). A minute keeps a client from asking again
// for every call while bounding how long it can miss a change it did not
// subscribe to; subscribers hear of changes at once. Nothing hearth serves
// is meant for a cache shared between users: its catalog and tools come from
// one user's configuration.
const (
	cacheTTLMs = 60_000
	cacheScope = "private"
)

// rootsInputKey names the roots/list request of an InputRequiredResult.
const rootsInputKey = "roots"

// reqMeta is what a modern request's _meta says: every request carries its
// own; nothing is kept from one request to the next.
type reqMeta struct {
	version       string
	clientName    string
	clientVersion string
	rootsCapable  bool
	logs          bool // the request asked for log messages
	logLevel      tool.Level
}

// metaRoot returns the _meta object node of a request's params (nil: none).
func metaRoot(d *jsonval.Doc) *jsonval.Node {
	if d == nil || d.Root().Kind() != jsonval.Object {
		return nil
	}
	return d.Get(d.Root(), "_meta")
}

// modernShaped reports whether a request carries the modern era's protocol
// version key in its _meta, whatever its value.
func modernShaped(d *jsonval.Doc) bool {
	m := metaRoot(d)
	return m != nil && m.Kind() == jsonval.Object && d.Get(m, metaProtocolVersion) != nil
}

// invalidMeta is the -32602 every malformed _meta gets.
func invalidMeta(format string, args ...any) *jsonrpc.Error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "Invalid params: " + fmt.Sprintf(format, args...)}
}

// readMeta reads and checks a modern request's _meta: the protocol version
// and client capabilities are required, clientInfo and logLevel optional,
// each of its type.
func readMeta(d *jsonval.Doc) (reqMeta, *jsonrpc.Error) {
	var m reqMeta
	if d == nil || d.Root().Kind() != jsonval.Object {
		return m, invalidMeta(`params must be an object carrying "_meta" with %q and %q`, metaProtocolVersion, metaClientCapabilities)
	}
	meta := metaRoot(d)
	if meta == nil {
		return m, invalidMeta(`"_meta" is required, with %q and %q`, metaProtocolVersion, metaClientCapabilities)
	}
	if meta.Kind() != jsonval.Object {
		return m, invalidMeta(`"_meta" must be an object`)
	}
	v := d.Get(meta, metaProtocolVersion)
	if v == nil {
		return m, invalidMeta(`"_meta" lacks %q`, metaProtocolVersion)
	}
	if v.Kind() != jsonval.String {
		return m, invalidMeta(`"_meta"[%q] must be a string`, metaProtocolVersion)
	}
	m.version = d.Str(v)
	if !slices.Contains(ModernVersions, m.version) {
		return m, unsupportedVersion(m.version)
	}
	caps := d.Get(meta, metaClientCapabilities)
	if caps == nil {
		return m, invalidMeta(`"_meta" lacks %q`, metaClientCapabilities)
	}
	if caps.Kind() != jsonval.Object {
		return m, invalidMeta(`"_meta"[%q] must be an object`, metaClientCapabilities)
	}
	if roots := d.Get(caps, "roots"); roots != nil {
		if roots.Kind() != jsonval.Object {
			return m, invalidMeta(`"_meta"[%q].roots must be an object`, metaClientCapabilities)
		}
		m.rootsCapable = true
	}
	if info := d.Get(meta, metaClientInfo); info != nil {
		if info.Kind() != jsonval.Object {
			return m, invalidMeta(`"_meta"[%q] must be an object with name and version`, metaClientInfo)
		}
		name, version := d.Get(info, "name"), d.Get(info, "version")
		if name == nil || name.Kind() != jsonval.String || version == nil || version.Kind() != jsonval.String {
			return m, invalidMeta(`"_meta"[%q] needs string name and version`, metaClientInfo)
		}
		m.clientName, m.clientVersion = d.Str(name), d.Str(version)
	}
	if lvl := d.Get(meta, metaLogLevel); lvl != nil {
		l, ok := tool.Level(0), false
		if lvl.Kind() == jsonval.String {
			l, ok = tool.ParseLevel(d.Str(lvl))
		}
		if !ok {
			return m, invalidMeta(`"_meta"[%q] must be one of debug, info, notice, warning, error, critical, alert, emergency`, metaLogLevel)
		}
		m.logs, m.logLevel = true, l
	}
	if tok := d.Get(meta, "progressToken"); tok != nil && tok.Kind() != jsonval.String &&
		(tok.Kind() != jsonval.Number || !isInteger(d.Str(tok))) {
		return m, invalidMeta(`"_meta".progressToken must be a string or an integer`)
	}
	return m, nil
}

func isInteger(lit string) bool {
	_, err := strconv.ParseInt(lit, 10, 64)
	return err == nil
}

// unsupportedVersion is UnsupportedProtocolVersionError for a modern request
// naming a version this server does not serve per request.
func unsupportedVersion(requested string) *jsonrpc.Error {
	if len(requested) > 64 {
		requested = requested[:64] + "…"
	}
	return &jsonrpc.Error{
		Code: codeUnsupportedVersion,
		Message: fmt.Sprintf("Unsupported protocol version %q: this server serves %v per request; the 2025 versions need an initialize handshake on a new connection",
			requested, ModernVersions),
		Data: map[string]any{"supported": ModernVersions, "requested": requested},
	}
}

// serverInfoJSON is the Implementation object results carry in _meta.
func (s *Server) serverInfoJSON() []byte {
	s.infoOnce.Do(func() {
		s.info, _ = json.Marshal(map[string]string{"name": s.opts.Name, "title": "hearth", "version": s.opts.Version})
	})
	return s.info
}

// modernResult adds what every modern result carries to a result object:
// resultType "complete", the server's identity in _meta and, for a
// cacheable result, its caching hints.
func (s *registry) modernResult(res []byte, cacheable bool) []byte {
	if len(res) < 2 || res[0] != '{' {
		return res
	}
	b := make([]byte, 0, len(res)+160)
	b = append(b, `{"resultType":"complete","_meta":{"`+metaServerInfo+`":`...)
	b = append(b, s.srv.serverInfoJSON()...)
	b = append(b, '}')
	if cacheable {
		b = append(b, `,"ttlMs":`+strconv.Itoa(cacheTTLMs)+`,"cacheScope":"`+cacheScope+`"`...)
	}
	if rest := res[1:]; len(rest) > 0 && rest[0] != '}' {
		b = append(b, ',')
	}
	return append(b, res[1:]...)
}

// cacheable reports whether a method's result carries caching hints.
func cacheable(method string) bool {
	switch method {
	case "server/discover", "tools/list", "resources/list", "resources/read", "resources/templates/list":
		return true
	}
	return false
}

// ok is the reply frame of a successful request, shaped for its era.
func (s *registry) ok(e *entry, res []byte) []byte {
	if e.meta != nil {
		res = s.modernResult(res, cacheable(e.method))
	}
	return jsonrpc.ResultFrame(e.id, res)
}

// discover serves server/discover.
func (s *registry) discover(e *entry) []byte {
	return s.result(e, map[string]any{
		"supportedVersions": ModernVersions,
		"capabilities":      s.srv.capabilities(),
		"instructions":      s.srv.opts.Instructions,
	})
}

// capabilities are the server's capabilities, alike in both eras.
func (s *Server) capabilities() map[string]any {
	caps := map[string]any{
		"tools":   map[string]any{"listChanged": true},
		"logging": map[string]any{},
	}
	if s.opts.Registry != nil && len(s.opts.Registry.ResourceProviders()) > 0 {
		caps["resources"] = map[string]any{"listChanged": true, "subscribe": false}
	}
	return caps
}

// modernClient is what a modern tool call knows of its client: the
// transport's (pid, and the shim's hello cwd) and what this request's _meta
// says. Nothing comes from an earlier request.
func (s *registry) modernClient(m *reqMeta) tool.Client {
	c := s.peer.whereabouts()
	c.Name, c.Version = m.clientName, m.clientVersion
	return c
}

// noteModernClient records the latest modern request's client identity and
// version for daemon_status and hearthd status (display only: no request
// reads it).
func (s *registry) noteModernClient(m *reqMeta) {
	s.peer.identify(m.clientName, m.clientVersion, m.version, true)
}

// inputRoots reads the roots/list answer a retried request carries in
// inputResponses (answered false: none). Only file:// roots count.
func inputRoots(d *jsonval.Doc) (roots []string, answered bool, err *jsonrpc.Error) {
	if d == nil || d.Root().Kind() != jsonval.Object {
		return nil, false, nil
	}
	in := d.Get(d.Root(), "inputResponses")
	if in == nil || in.Kind() == jsonval.Null {
		return nil, false, nil
	}
	if in.Kind() != jsonval.Object {
		return nil, false, invalidMeta(`"inputResponses" must be an object`)
	}
	r := d.Get(in, rootsInputKey)
	if r == nil {
		return nil, false, nil // other answers are ignored, as MRTR says
	}
	list := d.Get(r, "roots")
	if r.Kind() != jsonval.Object || list == nil || list.Kind() != jsonval.Array {
		return nil, false, invalidMeta(`"inputResponses".%s must be a roots/list result: {"roots": [{"uri": "file:///..."}]}`, rootsInputKey)
	}
	roots = []string{}
	for it := d.Kids(list); ; {
		root := it.Next()
		if root == nil {
			break
		}
		uri := d.Get(root, "uri")
		if root.Kind() != jsonval.Object || uri == nil || uri.Kind() != jsonval.String {
			return nil, false, invalidMeta(`"inputResponses".%s.roots[] must be objects with a string "uri"`, rootsInputKey)
		}
		if p, ok := fileURIPath(d.Str(uri)); ok {
			roots = append(roots, p)
		}
	}
	return roots, true, nil
}

// inputRequiredRoots is the InputRequiredResult asking the client for its
// roots: the retry carries them in inputResponses.roots. The request's
// params are optional in the schema but sent (empty): some clients decode
// them unconditionally.
func (s *registry) inputRequiredRoots(e *entry) []byte {
	b := make([]byte, 0, 256)
	b = append(b, `{"resultType":"input_required","inputRequests":{"`+rootsInputKey+`":{"method":"roots/list","params":{}}},"_meta":{"`+metaServerInfo+`":`...)
	b = append(b, s.srv.serverInfoJSON()...)
	b = append(b, "}}"...)
	return jsonrpc.ResultFrame(e.id, b)
}

// modernCallClient is the client a modern tool call runs for. A tool that
// works on the client's directory (tool.Tool.NeedsRoots) runs with the shim's
// hello (or the stdio daemon's own directory) when the tool says that
// answers; else, when this request declares the roots capability, the client
// is asked for its roots with an InputRequiredResult (the reply is then
// returned), and the retry's inputResponses carry them.
func (s *registry) modernCallClient(e *entry, t *tool.Entry, args tool.Args) (tool.Client, []byte) {
	client := s.modernClient(e.meta)
	if t.NeedsRoots == nil {
		return client, nil
	}
	roots, answered, bad := inputRoots(e.paramsDoc)
	if bad != nil {
		return client, s.fail(e, bad.Code, bad.Message, nil)
	}
	if answered {
		if !e.meta.rootsCapable {
			return client, s.fail(e, codeMissingCapability, "Missing required client capability: inputResponses."+rootsInputKey+
				" answers roots/list, which needs the roots capability in _meta "+strconv.Quote(metaClientCapabilities),
				map[string]any{"requiredCapabilities": map[string]any{"roots": map[string]any{}}})
		}
		client.Roots = roots
		return client, nil
	}
	if !e.meta.rootsCapable || !t.NeedsRoots(args.Doc, client.Cwd) {
		return client, nil // the arguments or the client's directory answer
	}
	return client, s.inputRequiredRoots(e)
}

// ModernEnvelope tells a transport which era a request belongs to before a
// session sees it: modern is true when its params' _meta carries the
// protocol version key (whatever its value). version is the version named
// (when it is a string), and err the error a malformed or unsupported _meta
// earns (-32602 or -32022; nil: well-formed and served). Streamable HTTP
// answers those errors with HTTP 400 and checks its headers against version.
func ModernEnvelope(msg *jsonrpc.Message) (modern bool, version string, err *jsonrpc.Error) {
	d := msg.ParamsDoc()
	if !modernShaped(d) {
		return false, "", nil
	}
	m, bad := readMeta(d)
	return true, m.version, bad
}
