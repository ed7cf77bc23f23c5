package daemon

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/hearth-mcp/hearth/pkg/atomicfile"
	"github.com/hearth-mcp/hearth/pkg/config"
	"github.com/hearth-mcp/hearth/pkg/endpoint"
	"github.com/hearth-mcp/hearth/pkg/hello"
	"github.com/hearth-mcp/hearth/pkg/mcphttp"
	"github.com/hearth-mcp/hearth/pkg/sessionkeep"
)

// httpEndpoint is Streamable HTTP on a loopback address
// (docs/protocol.md, "Streamable HTTP").
type httpEndpoint struct {
	ln      net.Listener
	srv     *http.Server
	handler *mcphttp.Handler
	servers *mcphttp.Handler // /servers/NAME/mcp
	url     string
}

// hostedByPath turns /servers/NAME/mcp into the run request that attaches
// a session to the config's [servers.NAME]: a name of the config only, so
// an HTTP client chooses among the servers the user configured and never
// names a command, a path or an environment.
func (d *Daemon) hostedByPath(path string) (json.RawMessage, error) {
	name, ok := strings.CutPrefix(path, "/servers/")
	if ok {
		name, ok = strings.CutSuffix(name, "/mcp")
	}
	if !ok || name == "" || strings.Contains(name, "/") {
		return nil, fmt.Errorf("a hosted server's endpoint is /servers/NAME/mcp")
	}
	var servers map[string]config.Server
	if s := d.Settings(); s != nil {
		servers = s.Servers()
	}
	if _, ok := servers[name]; !ok {
		return nil, fmt.Errorf("no server named %q in the config file's [servers] tables", name)
	}
	return json.Marshal(hello.Run{Name: name})
}

// webState is the HTTP endpoint a socket daemon serves, swapped on SIGHUP
// when http_listen or http_auth changed.
type webState struct {
	mu sync.Mutex
	// on: the daemon serves the socket, so it may serve HTTP (a stdio
	// daemon never does).
	on        bool
	ep        *httpEndpoint
	listen    string // what ep listens on as configured ("" when none)
	authNone  bool
	tokenFile string // where its bearer token is kept
	url       string // ep's URL ("" when not served)
	auth      string // "token" or "none"
}

func (w *webState) served() (url, auth, tokenFile string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.url, w.auth, w.tokenFile
}

// serveHTTP starts the HTTP endpoint on listen ("" serves none) when the
// daemon starts serving its socket.
func (d *Daemon) serveHTTP(listen string, authNone bool, tokenFile string) error {
	d.web.mu.Lock()
	defer d.web.mu.Unlock()
	d.web.on = true
	return d.swapHTTPLocked(listen, authNone, tokenFile, 0)
}

// swapHTTPLocked stops the endpoint being served (draining its sessions
// within bound) and starts one on listen; d.web.mu is held.
func (d *Daemon) swapHTTPLocked(listen string, authNone bool, tokenFile string, bound time.Duration) error {
	d.web.ep.stop(bound)
	d.web.ep, d.web.listen, d.web.authNone, d.web.url, d.web.auth = nil, "", false, "", ""
	e, err := d.startHTTP(listen, authNone, tokenFile)
	if err != nil || e == nil {
		return err
	}
	d.web.ep, d.web.listen, d.web.authNone, d.web.tokenFile, d.web.url = e, listen, authNone, tokenFile, e.url
	d.web.auth = "token"
	if authNone {
		d.web.auth = "none"
	}
	return nil
}

// stopHTTP drains and stops the HTTP endpoint for good (shutdown).
func (d *Daemon) stopHTTP(bound time.Duration) {
	d.web.mu.Lock()
	defer d.web.mu.Unlock()
	d.web.on = false
	d.web.ep.stop(bound)
	d.web.ep, d.web.url = nil, ""
}

// reloadHTTP applies http_listen and http_auth on SIGHUP: when either
// changed, the endpoint is stopped (its sessions drained, as at shutdown)
// and started again as the settings now say. A setting that cannot be
// served (a port in use, a token file refused) is logged and leaves HTTP
// off until the next SIGHUP or restart; the socket serves on regardless.
func (d *Daemon) reloadHTTP() {
	if d.cfg.Settings == nil {
		return
	}
	var next Config
	if err := loadHTTP(&next, d.cfg.Settings.Getenv); err != nil {
		d.log.Error("HTTP settings not applied; the endpoint serves as before", zap.Error(err))
		return
	}
	d.web.mu.Lock()
	defer d.web.mu.Unlock()
	if !d.web.on || (next.HTTPListen == d.web.listen && next.HTTPAuthNone == d.web.authNone) {
		return
	}
	if err := d.swapHTTPLocked(next.HTTPListen, next.HTTPAuthNone, next.TokenFile, d.cfg.DrainTimeout); err != nil {
		d.log.Error("the HTTP endpoint could not be started after SIGHUP; HTTP is off until the settings are fixed", zap.Error(err))
		return
	}
	if next.HTTPListen == "" {
		d.log.Info("http_listen unset: the HTTP endpoint is stopped")
	}
}

// startHTTP listens on listen and serves /mcp; nil when listen is empty.
func (d *Daemon) startHTTP(listen string, authNone bool, tokenFile string) (*httpEndpoint, error) {
	if listen == "" {
		return nil, nil
	}
	token := ""
	if authNone {
		d.log.Warn(`http_auth = "none": the HTTP endpoint takes requests without a token; any local process of any user can call your tools through it`,
			zap.String("listen", listen))
	} else {
		t, err := loadToken(tokenFile)
		if err != nil {
			return nil, err
		}
		token = t
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return nil, fmt.Errorf("http_listen %s: %w", listen, err)
	}
	// What 2025 sessions keep for resumption draws on a quarter of the
	// daemon-wide budget, shared by both endpoints: however many sessions
	// there are, the socket's clients and bodies being read keep the rest
	// (decision 0027).
	held := d.srv.HeldBudget()
	replay := held.Share(held.Max() / 4)
	keep := d.keptSessions()
	h := mcphttp.New(mcphttp.Options{Serve: d.srv.Serve, Token: token, Log: d.log, Budget: held, Replay: replay, Keep: keep})
	// The config's hosted servers, each at /servers/NAME/mcp: a session
	// there names its server in a hello, as `hearth run NAME` does.
	servers := mcphttp.New(mcphttp.Options{Serve: d.srv.Serve, Token: token, Log: d.log, Budget: held, Replay: replay, Hosted: d.hostedByPath, Keep: keep})
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	mux.Handle("/servers/", servers)
	e := &httpEndpoint{ln: ln, handler: h, servers: servers, url: "http://" + ln.Addr().String() + "/mcp"}
	e.srv = &http.Server{
		Handler: mux,
		// Slow or idle clients hold a goroutine and a descriptor each:
		// bound how long a request's head may take and an idle
		// connection may linger. A body's deadline is the handler's
		// (mcphttp.Options.BodyTimeout): ReadTimeout would count from
		// the head and apply to nothing else. Streams have no write
		// timeout.
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          zap.NewStdLog(d.log.Named("http")),
	}
	go func() {
		if err := e.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			d.log.Error("the HTTP endpoint stopped", zap.Error(err))
		}
	}()
	auth := "token"
	if token == "" {
		auth = "none"
	}
	d.log.Info("mcp:http url="+e.url+" auth="+auth, zap.String("url", e.url), zap.String("auth", auth), zap.String("token_file", tokenFile))
	return e, nil
}

// keptSessions is where 2025 sessions are kept for the next daemon
// (http-sessions/ in the state directory, private to the user); nil, and
// sessions end with the daemon, when there is no state directory or it
// cannot be made private.
func (d *Daemon) keptSessions() *sessionkeep.Dir {
	if d.cfg.StateDir == "" {
		return nil
	}
	keep, err := sessionkeep.Open(filepath.Join(d.cfg.StateDir, stateSessions))
	if err != nil {
		d.log.Warn("HTTP sessions will not outlive this daemon", zap.Error(err))
		return nil
	}
	return keep
}

// stop drains the HTTP sessions (as the socket's drain) and closes the
// listener and its connections.
func (e *httpEndpoint) stop(bound time.Duration) {
	if e == nil {
		return
	}
	_ = e.ln.Close()
	done := make(chan struct{})
	go func() { e.handler.Close(); e.servers.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(bound):
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = e.srv.Shutdown(ctx)
	_ = e.srv.Close()
}

// loadToken reads the bearer token from path, creating it (0600, 256 random
// bits) on first start. A token file others may read, or that is not the
// user's own, is refused: the token is all that stands between another
// local user and your tools.
func loadToken(path string) (string, error) {
	if path == "" {
		return "", errors.New("no place for the HTTP token file")
	}
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return "", fmt.Errorf("HTTP token: %w", err)
		}
		var b [32]byte
		if _, err := rand.Read(b[:]); err != nil {
			return "", fmt.Errorf("HTTP token: %w", err)
		}
		tok := hex.EncodeToString(b[:])
		if err := atomicfile.Write(path, []byte(tok+"\n"), 0o600); err != nil {
			return "", fmt.Errorf("HTTP token %s: %w", path, err)
		}
		return tok, nil
	}
	if err != nil {
		return "", fmt.Errorf("HTTP token %s: %w", path, err)
	}
	if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("HTTP token %s is not a regular file", path)
	}
	// The one check of a file hearth must keep from other users, the
	// config file's too (endpoint.OwnFile).
	if err := endpoint.OwnFile(path, true); err != nil {
		return "", fmt.Errorf("HTTP token refused: %w (or delete it for a new one)", err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("HTTP token %s: %w", path, err)
	}
	tok := strings.TrimSpace(string(b))
	if len(tok) < 16 {
		return "", fmt.Errorf("HTTP token %s holds fewer than 16 characters; delete it for a new one", path)
	}
	return tok, nil
}
