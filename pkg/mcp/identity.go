package mcp

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"

	"go.uber.org/zap"

	"github.com/hearth-mcp/hearth/pkg/hello"
	"github.com/hearth-mcp/hearth/pkg/jsonrpc"
	"github.com/hearth-mcp/hearth/pkg/tool"
)

// identity is the session's part that knows who the client is: what the
// transport said (pid), the shim's hello (directory, version, data
// directory), and the identity initialize or the latest modern request
// gave. Tools read it through clientInfo; status through ClientInfo.
type identity struct {
	mu              sync.Mutex
	client          tool.Client
	protocolVersion string
	shimVersion     string
	home            string // the data directory the shim resolved (its hello)

	// homeRefusal is the error every request but ping gets when the shim
	// resolves another data directory (nil: none).
	homeRefusal  atomic.Pointer[string]
	homeWarnOnce sync.Once
}

// refusal is the wrong-home error to answer requests with (nil: none).
func (p *identity) refusal() *string { return p.homeRefusal.Load() }

// identify records the client's name and version and the protocol version.
// keepName: an empty name leaves the one known (a modern request that said
// none).
func (p *identity) identify(name, version, protocolVersion string, keepName bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.protocolVersion = protocolVersion
	if !keepName || name != "" {
		p.client.Name, p.client.Version = name, version
	}
}

// setRoots records the client's roots (file paths).
func (p *identity) setRoots(roots []string) {
	p.mu.Lock()
	p.client.Roots = roots
	p.mu.Unlock()
}

// whereabouts is what the transport and the hello say of the client,
// nothing from a request: its directory and pid.
func (p *identity) whereabouts() tool.Client {
	p.mu.Lock()
	defer p.mu.Unlock()
	return tool.Client{Cwd: p.client.Cwd, PID: p.client.PID}
}

// clientInfo is a copy of everything known of the client.
func (p *identity) clientInfo() tool.Client {
	p.mu.Lock()
	defer p.mu.Unlock()
	c := p.client
	c.Roots = append([]string(nil), c.Roots...)
	return c
}

func (s *session) clientInfo() tool.Client { return s.peer.clientInfo() }

// hello takes the shim's $/hearth/hello: the client's directory and pid, the
// shim's version, and the data directory the shim resolved.
func (s *session) hello(msg *jsonrpc.Message) {
	var h hello.Hello
	if json.Unmarshal(msg.Params, &h) != nil {
		return
	}
	if h.Run != nil {
		defer func() { s.host(h.Run, s.peer.whereabouts().Cwd, h.ShimPID) }()
	}
	p := &s.peer
	p.mu.Lock()
	if h.Cwd != "" && h.Cwd[0] == '/' {
		p.client.Cwd = h.Cwd
	}
	if h.PID > 0 {
		p.client.PID = h.PID
	}
	p.shimVersion = h.Version
	if filepath.IsAbs(h.Home) {
		p.home = h.Home
	}
	pid := p.client.PID
	p.mu.Unlock()
	if !filepath.IsAbs(h.Home) || s.srv.opts.Home == "" {
		return
	}
	if sameDir(s.srv.opts.Home, h.Home) {
		p.homeRefusal.Store(nil)
		return
	}
	refusal := fmt.Sprintf("this hearth daemon (pid %d) serves the data directory %s, but this client resolves %s; set HEARTH_HOME (or MCP_SOCKET_PATH) so they agree",
		os.Getpid(), s.srv.opts.Home, h.Home)
	p.homeRefusal.Store(&refusal)
	p.homeWarnOnce.Do(func() {
		s.log.Warn("a client resolves another data directory; refusing its requests",
			zap.String("home", s.srv.opts.Home), zap.String("client_home", h.Home), zap.Int("client_pid", pid))
	})
}

// sameDir compares two directories after cleaning them and resolving
// symbolic links (when that fails, as for a directory not made yet, the
// cleaned path stands).
func sameDir(a, b string) bool {
	resolve := func(p string) string {
		p = filepath.Clean(p)
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return r
		}
		return p
	}
	return resolve(a) == resolve(b)
}

func (s *session) info() ClientInfo {
	p := &s.peer
	p.mu.Lock()
	ci := ClientInfo{
		Name:            p.client.Name,
		Version:         p.client.Version,
		ProtocolVersion: p.protocolVersion,
		Cwd:             p.client.Cwd,
		PID:             p.client.PID,
		ShimVersion:     p.shimVersion,
		Home:            p.home,
		Transport:       s.transport(),
		Since:           s.since,
		Requests:        s.requests.Load(),
	}
	p.mu.Unlock()
	for _, d := range s.dispatchers() {
		d.Status(&ci)
	}
	return ci
}

// transport is ClientInfo.Transport: a socket connection a shim opened is
// a relay.
func (s *session) transport() string {
	if s.surface() == shimRelay && s.conn.Transport == "socket" {
		return "relay"
	}
	return s.conn.Transport
}
