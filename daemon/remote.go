package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"runtime"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/hearth-mcp/hearth/pkg/hosted"
	"github.com/hearth-mcp/hearth/pkg/jsonrpc"
	"github.com/hearth-mcp/hearth/pkg/oauth"
	"github.com/hearth-mcp/hearth/pkg/opener"
	"github.com/hearth-mcp/hearth/pkg/remote"
	"github.com/hearth-mcp/hearth/pkg/secret"
)

// Remote servers (docs/remote.md): each hosted instance of a remote spec
// is a remote.Conn, and each server's authorization is one oauth.Manager,
// shared by every instance of it (one token family per server, issuer
// and account, its renewals serialized), whatever the windows, shapes or
// directories of its clients.

// SignInTimeout bounds how long a call that needs a sign-in waits for the
// one the daemon opened in the browser; after it the call gets an error
// naming `hearthd login NAME` (docs/decisions/0075-remote-upstreams.md).
const SignInTimeout = 2 * time.Minute

// remoteInitTimeout: a remote server's initialize may wait for a sign-in.
const remoteInitTimeout = SignInTimeout + 30*time.Second

type remoteState struct {
	once     sync.Once
	vault    *secret.Vault
	vaultErr error

	mu       sync.Mutex
	managers map[string]*oauth.Manager // by managerKey
	names    map[string]string         // server name -> managerKey, the last spec of that name
	pending  map[string]*oauth.Pending // hearthd login under way, by managerKey
}

// secrets is the daemon's vault (in the state directory), opened on first
// use.
func (d *Daemon) secrets() (*secret.Vault, error) {
	r := &d.remote
	r.once.Do(func() {
		dir := d.cfg.StateDir
		if dir == "" {
			r.vaultErr = errors.New("the daemon has no state directory to keep secrets in")
			return
		}
		r.vault, r.vaultErr = secret.Open(secret.Options{Dir: dir})
	})
	return r.vault, r.vaultErr
}

// expand replaces the ${secret:NAME} references of a value with the
// stored secrets; the error names the secret, never a value.
func (d *Daemon) expand(value string) (string, error) {
	if !strings.Contains(value, "${") {
		return value, nil
	}
	v, err := d.secrets()
	if err != nil {
		return "", err
	}
	return secret.Expand(value, v.Lookup)
}

func managerKey(s hosted.Spec) string {
	return s.URL + "\x00" + s.Client.ID + "\x00" + s.Client.Issuer
}

// opener is the command that opens a URL: the open_url setting
// (HEARTH_OPEN_URL over the config file's), else the system's opener.
func (d *Daemon) openURL(ctx context.Context, u string) error {
	setting := os.Getenv(opener.Env)
	if s := d.Settings(); s != nil {
		setting = s.Getenv(opener.Env) // the environment's over the file's
	}
	argv, err := opener.Command(setting, "", runtime.GOOS)
	if err != nil {
		return err
	}
	return opener.Open(ctx, argv, u)
}

// manager is the authorization of a remote spec's server, made on first
// use.
func (d *Daemon) manager(s hosted.Spec) (*oauth.Manager, error) {
	vault, err := d.secrets()
	if err != nil {
		return nil, err
	}
	r := &d.remote
	k := managerKey(s)
	name := s.ServerName()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.managers == nil {
		r.managers, r.names, r.pending = map[string]*oauth.Manager{}, map[string]string{}, map[string]*oauth.Pending{}
	}
	r.names[name] = k
	if s.Entry != "" {
		r.names[s.Entry] = k
	}
	if m := r.managers[k]; m != nil {
		return m, nil
	}
	reg := oauth.Registration{Name: "hearth", ClientID: s.Client.ID, Issuer: s.Client.Issuer}
	if s.Client.Secret != "" {
		v, err := vault.Lookup(s.Client.Secret)
		if err != nil {
			return nil, fmt.Errorf("%s's client_secret: %w", name, err)
		}
		reg.ClientSecret = v
	}
	if u := os.Getenv("HEARTH_CLIENT_METADATA_URL"); u != "" {
		reg.MetadataURL = u
	}
	m, err := oauth.New(oauth.Config{Name: name, Server: s.URL, Store: vault, Registration: reg, AutoSignIn: true,
		SignInTimeout: SignInTimeout, Open: func(ctx context.Context, u string) error {
			if err := d.openURL(ctx, u); err != nil {
				// No browser to open here: the call is told what to run.
				return &oauth.SignInNeeded{Name: name, Server: s.URL, Why: "the sign-in page could not be opened: " + err.Error()}
			}
			return nil
		}})
	if err != nil {
		return nil, err
	}
	r.managers[k] = m
	return m, nil
}

// dialRemote connects an instance to its remote server (hosted.Options.Remote).
func (d *Daemon) dialRemote(s hosted.Spec, urlElicitation bool) (hosted.Remote, error) {
	m, err := d.manager(s)
	if err != nil {
		return nil, err
	}
	h := http.Header{}
	for _, kv := range s.Headers {
		name, value, _ := strings.Cut(kv, ":")
		v, err := d.expand(strings.TrimSpace(value))
		if err != nil {
			return nil, fmt.Errorf("header %s: %w", strings.TrimSpace(name), err)
		}
		h.Add(strings.TrimSpace(name), v)
	}
	var auth remote.Authorizer = m
	if urlElicitation {
		auth = &signInOffer{m: m, name: s.ServerName()}
	}
	return remote.Dial(remote.Options{URL: s.URL, Name: s.ServerName(), Header: h, Auth: auth, Log: d.log.With(zap.String("server", s.Label()))})
}

// CodeURLElicitationRequired is the MCP error of a request that needs the
// user to visit a URL first (URLElicitationRequiredError, 2025-11-25).
const CodeURLElicitationRequired = -32042

// signInOffer authorizes the requests of an instance whose clients
// declare URL-mode elicitation: a request that needs a sign-in is not held
// while the daemon opens a browser; it is answered at once with a URL-mode
// elicitation of the sign-in's link (the sign-in, begun once for every
// window, waits on the loopback listener for the browser), and the client
// asks again once the user signed in.
type signInOffer struct {
	m    *oauth.Manager
	name string
}

// offers: the request may be answered with the elicitation. The opening
// (initialize, server/discover) and everything but a request wait for the
// sign-in the daemon opens, as for any other client: an error there ends
// the connection, not one call.
func offers(ctx context.Context) bool {
	switch remote.Method(ctx) {
	case "", "initialize", "server/discover", "ping":
		return false
	}
	return true
}

func (a *signInOffer) Token(ctx context.Context) (oauth.Token, error) {
	if !offers(ctx) {
		return a.m.Token(ctx)
	}
	t, err := a.m.Token(oauth.WithoutAutoSignIn(ctx))
	return t, a.offer(ctx, err)
}

func (a *signInOffer) Challenged(ctx context.Context, tok oauth.Token, status int, header http.Header) (oauth.Token, error) {
	if !offers(ctx) {
		return a.m.Challenged(ctx, tok, status, header)
	}
	t, err := a.m.Challenged(oauth.WithoutAutoSignIn(ctx), tok, status, header)
	return t, a.offer(ctx, err)
}

func (a *signInOffer) offer(ctx context.Context, err error) error {
	var need *oauth.SignInNeeded
	if !errors.As(err, &need) {
		return err
	}
	p, berr := a.m.Begin(ctx)
	if berr != nil {
		return err
	}
	return &jsonrpc.Error{Code: CodeURLElicitationRequired, Message: need.Error(),
		Data: map[string]any{"elicitations": []map[string]string{{"mode": "url", "elicitationId": "hearth-sign-in-" + a.name,
			"url": p.URL, "message": "Sign in to " + a.name + " (hearth holds the sign-in for every window)"}}}}
}

// authStatus is where a remote spec's sign-in stands (hosted.Options.AuthStatus).
func (d *Daemon) authStatus(s hosted.Spec) any {
	m, err := d.manager(s)
	if err != nil {
		return map[string]string{"state": "unavailable", "why": err.Error()}
	}
	return m.Status()
}

// managerNamed is the authorization of the remote server a name means: a
// [servers.NAME] with a url, or the name a running instance goes by.
func (d *Daemon) managerNamed(name string) (*oauth.Manager, string, error) {
	if s := d.Settings(); s != nil {
		if sv, ok := s.Servers()[name]; ok {
			if sv.URL == "" {
				return nil, "", fmt.Errorf("%s is not a remote server (its [servers.%s] has no url)", name, name)
			}
			spec, err := d.hostedSpec(helloRunNamed(name))
			if err != nil {
				return nil, "", err
			}
			m, err := d.manager(spec)
			return m, managerKey(spec), err
		}
	}
	r := &d.remote
	r.mu.Lock()
	k, ok := r.names[name]
	m := r.managers[k]
	r.mu.Unlock()
	if !ok || m == nil {
		return nil, "", fmt.Errorf("no remote server named %q: name a [servers.NAME] with a url, or the name (hearthd servers) of one a client reached with hearth run --url", name)
	}
	return m, k, nil
}

// envExpanded is the environment of a stdio spec with its secret
// references replaced (hosted.Options.Expand).
func (d *Daemon) envExpanded(env []string) ([]string, error) {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		x, err := d.expand(v)
		if err != nil {
			return nil, fmt.Errorf("env %s: %w", k, err)
		}
		out = append(out, k+"="+x)
	}
	return out, nil
}

// LoginMethod is the control request of `hearthd login NAME` and `hearthd
// logout NAME`: params {"action":"begin"|"wait"|"logout","name":NAME}.
// begin starts a sign-in to the remote server NAME means and answers
// {"url"} (the authorization URL, for the command to open); wait waits
// for that sign-in to end and answers {"state"} or the error; logout
// forgets the server's grant. No answer holds a token.
const LoginMethod = "$/hearth/login"

type loginArgs struct {
	Action string `json:"action"`
	Name   string `json:"name"`
}

func (d *Daemon) loginControl(ctx context.Context, params json.RawMessage) (any, error) {
	var a loginArgs
	if err := json.Unmarshal(params, &a); err != nil || a.Name == "" || (a.Action != "begin" && a.Action != "wait" && a.Action != "logout") {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: LoginMethod + ` takes {"action":"begin"|"wait"|"logout","name":NAME}`}
	}
	m, k, err := d.managerNamed(a.Name)
	if err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
	}
	r := &d.remote
	switch a.Action {
	case "logout":
		if err := m.Logout(); err != nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
		}
		return m.Status(), nil
	case "begin":
		p, err := m.Begin(ctx)
		if err != nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
		}
		r.mu.Lock()
		r.pending[k] = p
		r.mu.Unlock()
		return map[string]string{"url": p.URL}, nil
	}
	r.mu.Lock()
	p := r.pending[k]
	r.mu.Unlock()
	if p == nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "no sign-in to " + a.Name + " is under way"}
	}
	if err := p.Wait(ctx); err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
	}
	return m.Status(), nil
}
