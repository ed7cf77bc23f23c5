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
	"time"

	"go.uber.org/zap"

	"github.com/hearth-mcp/hearth/pkg/atomicfile"
	"github.com/hearth-mcp/hearth/pkg/config"
	"github.com/hearth-mcp/hearth/pkg/endpoint"
	"github.com/hearth-mcp/hearth/pkg/mcphttp"
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

// hostedPreface turns /servers/NAME/mcp into the hello that attaches a
// session to the config's [servers.NAME].
func (d *Daemon) hostedPreface(path string) ([]byte, error) {
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
	return json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "$/hearth/hello", "params": map[string]any{"run": map[string]string{"name": name}}})
}

// startHTTP listens on cfg.HTTPListen and serves /mcp; nil when it is not
// configured.
func (d *Daemon) startHTTP() (*httpEndpoint, error) {
	if d.cfg.HTTPListen == "" {
		return nil, nil
	}
	token := ""
	if d.cfg.HTTPAuthNone {
		d.log.Warn(`http_auth = "none": the HTTP endpoint takes requests without a token; any local process of any user can call your tools through it`,
			zap.String("listen", d.cfg.HTTPListen))
	} else {
		t, err := loadToken(d.cfg.TokenFile)
		if err != nil {
			return nil, err
		}
		token = t
	}
	ln, err := net.Listen("tcp", d.cfg.HTTPListen)
	if err != nil {
		return nil, fmt.Errorf("http_listen %s: %w", d.cfg.HTTPListen, err)
	}
	h := mcphttp.New(mcphttp.Options{Serve: d.srv.Serve, Token: token, Log: d.log, Budget: d.srv.HeldBudget()})
	// The config's hosted servers, each at /servers/NAME/mcp: a session
	// there names its server in a hello, as `hearth run NAME` does.
	servers := mcphttp.New(mcphttp.Options{Serve: d.srv.Serve, Token: token, Log: d.log, Budget: d.srv.HeldBudget(), Preface: d.hostedPreface})
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	mux.Handle("/servers/", servers)
	e := &httpEndpoint{ln: ln, handler: h, servers: servers, url: "http://" + ln.Addr().String() + "/mcp"}
	e.srv = &http.Server{
		Handler: mux,
		// Slow or idle clients hold a goroutine and a descriptor each:
		// bound how long a request's head may take and an idle
		// connection may linger. Streams have no write timeout.
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
	d.httpURL, d.httpAuth = e.url, auth
	d.log.Info("mcp:http url="+e.url+" auth="+auth, zap.String("url", e.url), zap.String("auth", auth), zap.String("token_file", d.cfg.TokenFile))
	return e, nil
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
