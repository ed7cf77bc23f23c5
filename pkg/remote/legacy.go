package remote

import (
	"bytes"
	"context"
	"encoding/base64"
	"net/http"
	"net/url"
	"strings"
	"time"

	"go.uber.org/zap"
)

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

// openLegacy tries the 2024-11-05 HTTP+SSE transport: a GET whose stream's
// first event is "endpoint", naming where messages are posted (on the
// server's own origin: a token is never sent anywhere else). It reports
// whether the server speaks it; then the stream is read on, its messages
// delivered, until it ends, which ends the Conn.
func (c *Conn) openLegacy(ctx context.Context) bool {
	res, err := c.do(c.ctx, func() (*http.Request, error) {
		req, err := http.NewRequestWithContext(c.ctx, "GET", c.o.URL, nil)
		if err == nil {
			c.headers(req, nil, "")
			req.Header.Set("Accept", "text/event-stream")
		}
		return req, err
	})
	if err != nil {
		return false
	}
	if res.StatusCode != 200 || !isEventStream(res) {
		drain(res)
		return false
	}
	r := newSSEReader(res.Body, c.o.MaxMessage)
	got := make(chan string, 1)
	go func() {
		for {
			ev, err := r.next()
			if err != nil && err != errEventTooLarge {
				got <- ""
				return
			}
			if err == nil && ev.Name == "endpoint" {
				got <- strings.TrimSpace(string(ev.Data))
				return
			}
		}
	}()
	var endpoint string
	select {
	case endpoint = <-got:
	case <-time.After(30 * time.Second):
	case <-ctx.Done():
	}
	base, _ := url.Parse(c.o.URL)
	ep, err := base.Parse(endpoint)
	if endpoint == "" || err != nil || ep.Scheme != base.Scheme || ep.Host != base.Host {
		res.Body.Close()
		if endpoint != "" {
			c.log.Warn("remote server's SSE endpoint is on another origin; refused", zap.String("server", c.o.Name))
		}
		return false
	}
	c.mu.Lock()
	c.endpoint = ep.String()
	c.mu.Unlock()
	c.decide(legacySSE)
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		defer res.Body.Close()
		for {
			ev, err := r.next()
			if err == errEventTooLarge {
				c.log.Warn("remote server sent an event over the limit; skipped", zap.String("server", c.o.Name))
				continue
			}
			if err != nil {
				if c.ctx.Err() == nil {
					go c.end(errSSEClosed, false)
				}
				return
			}
			if ev.Name == "message" && len(bytes.TrimSpace(ev.Data)) > 0 {
				c.deliverMessage(ev.Data, nil)
			}
		}
	}()
	return true
}

var errSSEClosed = &sseClosed{}

type sseClosed struct{}

func (*sseClosed) Error() string { return "the server closed its event stream" }

// postLegacy posts a request to the 2024-11-05 endpoint; its answer comes
// on the event stream.
func (c *Conn) postLegacy(ctx context.Context, endpoint string, frame []byte, cl *call) {
	res, err := c.do(ctx, func() (*http.Request, error) {
		req, err := http.NewRequestWithContext(ctx, "POST", endpoint, bytes.NewReader(frame))
		if err == nil {
			c.headers(req, frame, cl.method)
			req.Header.Del("Mcp-Session-Id")
		}
		return req, err
	})
	if err != nil {
		if ctx.Err() == nil {
			c.answerFailure(cl, err)
		}
		return
	}
	defer drain(res)
	if res.StatusCode/100 != 2 {
		c.answerError(cl, c.o.Name+" answered HTTP "+res.Status)
	}
}
