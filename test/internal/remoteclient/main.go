// Command remoteclient is a small MCP client built on hearth's remote
// packages (pkg/remote, pkg/oauth, pkg/secret, pkg/opener), for the
// official conformance suite's client authorization scenarios: the suite
// runs it with the server's URL as its last argument. It opens the
// conversation as a hosted server's router does (initialize, and the
// 2026-07-28 server/discover when initialize is refused), lists the tools
// and calls each, signing in as the server demands with the command that
// HEARTH_OPEN_URL names. A pre-registered client comes from
// MCP_CONFORMANCE_CONTEXT (client_id, client_secret, issuer), as it would
// from a server's entry.
//
// With -browse URL it is that command instead: it follows the
// authorization server's redirects to the loopback listener, as a browser
// would.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/hearth-mcp/hearth/pkg/oauth"
	"github.com/hearth-mcp/hearth/pkg/oauth/oauthtest"
	"github.com/hearth-mcp/hearth/pkg/opener"
	"github.com/hearth-mcp/hearth/pkg/remote"
	"github.com/hearth-mcp/hearth/pkg/secret"
)

func main() {
	browse := flag.Bool("browse", false, "follow the redirects of the URL given, as a browser would")
	cimd := flag.String("client-metadata-url", "", "the URL of hearth's client ID metadata document")
	via := flag.String("hearth", "", "the directory of hearth and hearthd: be a stdio client of `hearth run --url SERVER_URL` (hearth is then the server's client)")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: remoteclient [-client-metadata-url URL] SERVER_URL | remoteclient -browse URL")
		os.Exit(2)
	}
	if *browse {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := oauthtest.Browser(ctx, flag.Arg(0)); err != nil {
			fmt.Fprintln(os.Stderr, "browse:", err)
			os.Exit(1)
		}
		return
	}
	if *via != "" {
		if err := viaHearth(*via, flag.Arg(0), *cimd); err != nil {
			fmt.Fprintln(os.Stderr, "remoteclient:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(flag.Arg(0), *cimd); err != nil {
		fmt.Fprintln(os.Stderr, "remoteclient:", err)
		os.Exit(1)
	}
}

func run(server, cimd string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dir, err := os.MkdirTemp("", "remoteclient")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	vault, err := secret.Open(secret.Options{Dir: dir, Backend: secret.File})
	if err != nil {
		return err
	}
	argv, err := opener.Command("", os.Getenv(opener.Env), runtime.GOOS)
	if err != nil {
		return err
	}
	reg := oauth.Registration{MetadataURL: cimd, Name: "hearth conformance client"}
	if raw := os.Getenv("MCP_CONFORMANCE_CONTEXT"); raw != "" {
		var c struct {
			ClientID     string `json:"client_id"`
			ClientSecret string `json:"client_secret"`
			Issuer       string `json:"issuer"`
		}
		if err := json.Unmarshal([]byte(raw), &c); err != nil {
			return fmt.Errorf("MCP_CONFORMANCE_CONTEXT: %v", err)
		}
		if c.ClientID != "" {
			reg.ClientID, reg.ClientSecret, reg.Issuer = c.ClientID, c.ClientSecret, c.Issuer
		}
	}
	m, err := oauth.New(oauth.Config{Name: "conformance", Server: server, Store: vault, Registration: reg, AutoSignIn: true,
		SignInTimeout: time.Minute, Open: func(ctx context.Context, u string) error { return opener.Open(ctx, argv, u) }})
	if err != nil {
		return err
	}
	conn, err := remote.Dial(remote.Options{URL: server, Name: "the server", Auth: m})
	if err != nil {
		return err
	}
	defer conn.Close()
	s := &session{write: func(b []byte) error { return conn.Write(b, "") }, out: bufio.NewScanner(conn.Stdout()), probe: true}
	s.out.Buffer(make([]byte, 1<<20), 64<<20)
	return s.converse(ctx)
}

type session struct {
	write  func([]byte) error
	out    *bufio.Scanner
	probe  bool // a 2026-07-28 server is probed for (not through hearth, which does it)
	nextID int
	meta   map[string]any // 2026-07-28's per-request _meta, once the server is modern
}

type answer struct {
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// ask sends a request and waits for its answer (the server's other frames
// are skipped: these scenarios send the client none it must answer).
func (s *session) ask(method string, params map[string]any) (answer, error) {
	s.nextID++
	if s.meta != nil {
		params["_meta"] = s.meta
	}
	frame, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": s.nextID, "method": method, "params": params})
	if err := s.write(frame); err != nil {
		return answer{}, err
	}
	for s.out.Scan() {
		var a struct {
			answer
			ID     *int   `json:"id"`
			Method string `json:"method"`
		}
		if json.Unmarshal(s.out.Bytes(), &a) != nil || a.Method != "" || a.ID == nil || *a.ID != s.nextID {
			continue
		}
		return a.answer, nil
	}
	return answer{}, errors.New("the connection ended before " + method + " was answered")
}

func (s *session) converse(ctx context.Context) error {
	version := os.Getenv("MCP_CONFORMANCE_PROTOCOL_VERSION")
	if version == "" {
		version = "2025-11-25"
	}
	client := map[string]any{"name": "hearth-remoteclient", "version": "1"}
	legacy := version
	if legacy == "2026-07-28" || !s.probe {
		legacy = "2025-11-25"
	}
	a, err := s.ask("initialize", map[string]any{"protocolVersion": legacy, "capabilities": map[string]any{}, "clientInfo": client})
	if err != nil {
		return err
	}
	if a.Error != nil && !s.probe {
		return fmt.Errorf("initialize: %s", a.Error.Message)
	}
	if a.Error != nil {
		// Refused: a 2026-07-28 server, as the router probes one
		// (docs/decisions/0038-modern-upstreams.md).
		s.meta = map[string]any{"io.modelcontextprotocol/protocolVersion": "2026-07-28",
			"io.modelcontextprotocol/clientInfo": client, "io.modelcontextprotocol/clientCapabilities": map[string]any{}}
		if a, err = s.ask("server/discover", map[string]any{}); err != nil {
			return err
		}
		if a.Error != nil {
			return fmt.Errorf("initialize and server/discover refused: %s", a.Error.Message)
		}
	} else {
		s.write([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	}
	a, err = s.ask("tools/list", map[string]any{})
	if err != nil {
		return err
	}
	if a.Error != nil {
		return fmt.Errorf("tools/list: %s", a.Error.Message)
	}
	var tools struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	json.Unmarshal(a.Result, &tools)
	var names []string
	for _, tool := range tools.Tools {
		a, err := s.ask("tools/call", map[string]any{"name": tool.Name, "arguments": map[string]any{}})
		if err != nil {
			return err
		}
		if a.Error != nil {
			return fmt.Errorf("tools/call %s: %s", tool.Name, a.Error.Message)
		}
		names = append(names, tool.Name)
	}
	fmt.Printf("listed and called %d tools: %s\n", len(names), strings.Join(names, ", "))
	return ctx.Err()
}
