//go:build unix

package bench

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// startHTTPDaemon runs `hearthd serve` with Streamable HTTP (no token) on a
// free loopback port; it returns the socket and the endpoint.
func startHTTPDaemon(b *testing.B) (sock, url string) {
	b.Helper()
	build(b)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	sock, _ = startSocketDaemonIn(b, "HEARTH_LOG_LEVEL=error", "HEARTH_HTTP_LISTEN="+addr, "HEARTH_HTTP_AUTH=none")
	return sock, "http://" + addr + "/mcp"
}

// httpPeer is a plain HTTP client of the endpoint that takes JSON replies
// (no SSE), on one kept-alive connection.
type httpPeer struct {
	url, session string
	c            *http.Client
}

func (p *httpPeer) post(b *testing.B, body string, hdr map[string]string) (*http.Response, []byte) {
	req, _ := http.NewRequest("POST", p.url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if p.session != "" {
		req.Header.Set("Mcp-Session-Id", p.session)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	res, err := p.c.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	out, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode/100 != 2 {
		b.Fatalf("%s: %d %s", body, res.StatusCode, out)
	}
	return res, out
}

// BenchmarkHTTPVsSocket: a ping and a small tool call (daemon_status), as
// round trips on one connection each, over the socket, over a 2025 HTTP
// session, and as 2026-07-28 HTTP requests (a session per request),
// interleaved in one run. Reports each p50/p99 in µs and HTTP's p50 as a
// multiple of the socket's.
func BenchmarkHTTPVsSocket(b *testing.B) {
	sock, url := startHTTPDaemon(b)
	nc, err := net.Dial("unix", sock)
	if err != nil {
		b.Fatal(err)
	}
	defer nc.Close()
	s := newConn(nc)
	s.initialize(b)

	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	legacy := &httpPeer{url: url, c: client}
	res, _ := legacy.post(b, initLine, nil)
	legacy.session = res.Header.Get("Mcp-Session-Id")
	legacy.post(b, initedLine, nil)
	modern := &httpPeer{url: url, c: client}
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	modernCall := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"daemon_status","arguments":{},` + meta + `}}`
	modernHdr := map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "daemon_status"}

	kinds := []struct {
		name string
		do   func()
	}{
		{"socket-ping", func() { s.roundTrip(b, pingLine) }},
		{"http-ping", func() { legacy.post(b, pingLine, nil) }},
		{"socket-call", func() { s.roundTrip(b, callLine) }},
		{"http-call", func() { legacy.post(b, callLine, nil) }},
		{"http2026-call", func() {
			_, out := modern.post(b, modernCall, modernHdr)
			if !bytes.Contains(out, []byte(`"result"`)) {
				b.Fatalf("modern call: %s", out)
			}
		}},
	}
	for i := 0; i < 200; i++ { // warm up
		for _, k := range kinds {
			k.do()
		}
	}
	lat := make([][]time.Duration, len(kinds))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for j, k := range kinds {
			lat[j] = append(lat[j], timed(k.do))
		}
	}
	b.StopTimer()
	p50 := map[string]float64{}
	for j, k := range kinds {
		p50[k.name], _ = quantiles(b, k.name+"-", lat[j])
	}
	b.ReportMetric(p50["http-ping"]/p50["socket-ping"], "http/socket-ping-x")
	b.ReportMetric(p50["http-call"]/p50["socket-call"], "http/socket-call-x")
	b.ReportMetric(p50["http2026-call"]/p50["socket-call"], "http2026/socket-call-x")
}
