// Package statuspage is the daemon's status page: what hearth runs and
// what sharing saves, in a browser, for the user alone
// (docs/decisions/0063-status-page.md). Everything it needs is embedded
// (assets/); it reads the daemon's state through a function the daemon
// gives it and acts through the same rule as `hearthd servers`.
//
// Who may see it: a one-time token, minted for `hearthd ui` over the
// daemon's 0600 socket and put in the URL's fragment (never sent in a
// request line, so never logged or in a Referer), is traded once by the
// page's script for a per-page secret, kept in the tab's sessionStorage
// (its origin's alone: scheme, host and port). Every API request carries
// the secret in a header; a request without it, with a Host that is not
// a loopback host, or with an Origin other than the page's own, is
// refused (the Host and Origin rules are /mcp's, pkg/webguard, and the
// Origin must also be this listener's). A header of its own also makes a
// browser ask first (CORS preflight) before another site's page may send
// it, and nothing here answers a preflight.
package statuspage

import (
	"crypto/rand"
	"crypto/subtle"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/hearth-mcp/hearth/pkg/hosted"
	"github.com/hearth-mcp/hearth/pkg/mcp"
	"github.com/hearth-mcp/hearth/pkg/savings"
	"github.com/hearth-mcp/hearth/pkg/sweep"
	"github.com/hearth-mcp/hearth/pkg/webguard"
)

//go:embed assets
var assets embed.FS

// The headers of the page's requests.
const (
	TokenHeader  = "X-Hearth-Token"  // the one-time token, on /api/open
	SecretHeader = "X-Hearth-Secret" // the per-page secret, on every other API request
)

const (
	tokenLife  = 2 * time.Minute // a `hearthd ui` link not opened by then is dead
	secretIdle = 12 * time.Hour  // a page not used for that long must be opened again
	maxSecrets = 32
	maxBody    = 64 << 10
)

// State is everything the page shows.
type State struct {
	Daemon  Daemon             `json:"daemon"`
	Servers []Server           `json:"servers"`
	Tools   []mcp.ToolCounters `json:"tools"`
	Savings Savings            `json:"savings"`
}

// Daemon is the daemon's own figures.
type Daemon struct {
	Pid           int       `json:"pid"`
	Version       string    `json:"version"`
	StartedAt     time.Time `json:"startedAt"`
	UptimeSeconds float64   `json:"uptimeSeconds"`
	// RSSBytes is its resident memory; HeapBytes the Go heap in use.
	RSSBytes    int64  `json:"rssBytes"`
	HeapBytes   int64  `json:"heapBytes"`
	Connections int64  `json:"connections"`
	Requests    uint64 `json:"requests"`
	Errors      uint64 `json:"errors"`
}

// Server is one hosted instance: its status, its clients, its processes
// measured, and the end of its log.
type Server struct {
	Status  hosted.Status    `json:"status"`
	Clients []mcp.ClientInfo `json:"clients"`
	Measure savings.Instance `json:"measure"`
	LogTail []string         `json:"logTail"`
}

// Savings is what sharing saves now and since the daemon started.
type Savings struct {
	Now     savings.Figures  `json:"now"`
	Line    string           `json:"line"`
	History []savings.Sample `json:"history"`
	Peak    savings.Sample   `json:"peak"`
}

// Options are what the page reads and does through.
type Options struct {
	// State gathers what the page shows.
	State func() (State, error)
	// Act restarts, stops or forgets (the catalog entry of) the hosted
	// server name names: `hearthd servers`' rule.
	Act func(action, name string) (int, error)
	// Sweep lists what clients left behind; Kill ends those trees.
	Sweep func() ([]sweep.Orphan, error)
	Kill  func([]sweep.Orphan) ([]sweep.Outcome, error)
}

// Page serves the status page.
type Page struct {
	opts    Options
	static  http.Handler
	mu      sync.Mutex
	tokens  map[string]time.Time // one-time token -> when it dies
	secrets map[string]time.Time // per-page secret -> last used
}

// New makes the page.
func New(opts Options) *Page {
	sub, _ := fs.Sub(assets, "assets")
	return &Page{opts: opts, static: http.FileServerFS(sub), tokens: map[string]time.Time{}, secrets: map[string]time.Time{}}
}

// OpenURL mints a one-time token and returns the URL under base (the
// listener's http://HOST:PORT) that opens the page with it.
func (p *Page) OpenURL(base string) string {
	tok := random()
	p.mu.Lock()
	now := time.Now()
	for t, dies := range p.tokens {
		if now.After(dies) {
			delete(p.tokens, t)
		}
	}
	p.tokens[tok] = now.Add(tokenLife)
	p.mu.Unlock()
	return strings.TrimSuffix(base, "/") + "/#t=" + tok
}

func random() string {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand does not fail on the systems Go supports
	}
	return hex.EncodeToString(b[:])
}

// ServeHTTP routes: the embedded page, and its API.
func (p *Page) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'")
	if why := webguard.CheckHost(r.Host); why != "" {
		refuse(w, http.StatusForbidden, why)
		return
	}
	if why := sameOrigin(r); why != "" {
		refuse(w, http.StatusForbidden, why)
		return
	}
	if !strings.HasPrefix(r.URL.Path, "/api/") {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			refuse(w, http.StatusMethodNotAllowed, "the page is read with GET")
			return
		}
		p.static.ServeHTTP(w, r)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxBody)
	if r.URL.Path == "/api/open" {
		p.open(w, r)
		return
	}
	if !p.authorized(r.Header.Get(SecretHeader)) {
		refuse(w, http.StatusForbidden, "this request does not carry the page's secret: open the page with `hearthd ui`")
		return
	}
	switch r.URL.Path {
	case "/api/state":
		if !method(w, r, http.MethodGet) {
			return
		}
		st, err := p.opts.State()
		if err != nil {
			refuse(w, http.StatusInternalServerError, err.Error())
			return
		}
		reply(w, st)
	case "/api/action":
		if !method(w, r, http.MethodPost) {
			return
		}
		var a struct{ Action, Name string }
		if err := json.NewDecoder(r.Body).Decode(&a); err != nil || a.Name == "" || (a.Action != "restart" && a.Action != "stop" && a.Action != "forget") {
			refuse(w, http.StatusBadRequest, `want {"action":"restart"|"stop"|"forget","name":NAME}`)
			return
		}
		n, err := p.opts.Act(a.Action, a.Name)
		if err != nil {
			refuse(w, http.StatusBadRequest, err.Error())
			return
		}
		reply(w, map[string]any{"action": a.Action, "name": a.Name, "instances": n})
	case "/api/sweep":
		if !method(w, r, http.MethodGet) {
			return
		}
		list, err := p.opts.Sweep()
		if err != nil {
			refuse(w, http.StatusInternalServerError, err.Error())
			return
		}
		if list == nil {
			list = []sweep.Orphan{}
		}
		reply(w, map[string]any{"orphans": list})
	case "/api/sweep/kill":
		if !method(w, r, http.MethodPost) {
			return
		}
		var req struct {
			Targets []struct {
				Pid   int    `json:"pid"`
				Start uint64 `json:"start"`
			} `json:"targets"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.Targets) == 0 {
			refuse(w, http.StatusBadRequest, `want {"targets":[{"pid":PID,"start":START}, ...]}`)
			return
		}
		targets := make([]sweep.Orphan, len(req.Targets))
		for i, t := range req.Targets {
			targets[i] = sweep.Orphan{Pid: t.Pid, Start: t.Start}
		}
		out, err := p.opts.Kill(targets)
		if err != nil {
			refuse(w, http.StatusInternalServerError, err.Error())
			return
		}
		reply(w, map[string]any{"outcomes": out})
	default:
		refuse(w, http.StatusNotFound, "no such request")
	}
}

// open trades a one-time token for a per-page secret.
func (p *Page) open(w http.ResponseWriter, r *http.Request) {
	if !method(w, r, http.MethodPost) {
		return
	}
	tok := r.Header.Get(TokenHeader)
	p.mu.Lock()
	dies, ok := p.tokens[tok]
	if ok {
		delete(p.tokens, tok) // once
	}
	now := time.Now()
	if !ok || tok == "" || now.After(dies) {
		p.mu.Unlock()
		refuse(w, http.StatusForbidden, "this link was used or is too old: run `hearthd ui` again")
		return
	}
	for len(p.secrets) >= maxSecrets {
		oldest, at := "", now
		for s, used := range p.secrets {
			if used.Before(at) {
				oldest, at = s, used
			}
		}
		delete(p.secrets, oldest)
	}
	secret := random()
	p.secrets[secret] = now
	p.mu.Unlock()
	reply(w, map[string]string{"secret": secret})
}

// authorized: secret is a live page's (compared in constant time).
func (p *Page) authorized(secret string) bool {
	if secret == "" {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	for s, used := range p.secrets {
		if now.Sub(used) > secretIdle {
			delete(p.secrets, s)
			continue
		}
		if subtle.ConstantTimeCompare([]byte(s), []byte(secret)) == 1 {
			p.secrets[s] = now
			return true
		}
	}
	return false
}

// sameOrigin returns why a request's Origin is refused: /mcp's rule
// (a loopback origin), and also the page's own (the listener's host and
// port), so a page of another local server cannot drive this one.
func sameOrigin(r *http.Request) string {
	origins := r.Header.Values("Origin")
	if why := webguard.CheckOrigin(origins); why != "" {
		return why
	}
	for _, o := range origins {
		if !strings.EqualFold(strings.TrimSpace(o), "http://"+r.Host) {
			return "Origin " + clip(o) + " is not this page's; requests from other pages are refused"
		}
	}
	return ""
}

func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}

func method(w http.ResponseWriter, r *http.Request, m string) bool {
	if r.Method != m {
		refuse(w, http.StatusMethodNotAllowed, r.URL.Path+" takes "+m)
		return false
	}
	return true
}

func reply(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

func refuse(w http.ResponseWriter, code int, why string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(map[string]string{"error": why})
}

// Tail is the last lines (at most n, of at most the last 16 KiB) of the
// file at path; nil when it cannot be read.
func Tail(path string, n int) []string {
	if path == "" {
		return nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	const window = 16 << 10
	cut := false
	if fi, err := f.Stat(); err == nil && fi.Size() > window {
		f.Seek(fi.Size()-window, io.SeekStart)
		cut = true
	}
	b, err := io.ReadAll(io.LimitReader(f, window))
	if err != nil {
		return nil
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if cut && len(lines) > 1 {
		lines = lines[1:] // begun in the middle of a line
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	if len(lines) == 1 && lines[0] == "" {
		return []string{}
	}
	return lines
}

// ErrNoPage is what a daemon without a page answers.
var ErrNoPage = errors.New("this daemon serves no status page")
