package route_test

import (
	"encoding/json"
	"fmt"

	"github.com/hearth-mcp/hearth/pkg/hosted/route"
)

// frames is a peer that hands every frame it is written to a channel.
type frames chan []byte

func (p frames) Write(f []byte, _ string) error        { p <- append([]byte(nil), f...); return nil }
func (p frames) TryWrite([]byte, string) (bool, error) { return false, nil }
func (p frames) next() map[string]json.RawMessage {
	var m map[string]json.RawMessage
	json.Unmarshal(<-p, &m)
	return m
}

// upstream is a tiny MCP server run in process: it answers initialize and
// tools/list, and says which ids it was sent.
func upstream(r *route.Router) {
	in := make(frames, 16)
	r.Up(in)
	go func() {
		for f := range in {
			var req struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			json.Unmarshal(f, &req)
			if req.ID == nil {
				continue // a notification
			}
			var res string
			switch req.Method {
			case "initialize":
				fmt.Printf("upstream: initialize with id %s\n", req.ID)
				res = `{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"tiny","version":"1"}}`
			case "tools/list":
				fmt.Printf("upstream: tools/list with id %s\n", req.ID)
				res = `{"tools":[{"name":"echo","inputSchema":{"type":"object"}}]}`
			default:
				r.FromUpstream([]byte(`{"jsonrpc":"2.0","id":` + string(req.ID) + `,"error":{"code":-32601,"message":"no such method"}}`))
				continue
			}
			r.FromUpstream([]byte(`{"jsonrpc":"2.0","id":` + string(req.ID) + `,"result":` + res + `}`))
		}
	}()
}

// Two clients share one upstream: the upstream's initialize is done once
// (the second client is answered with its result), the upstream sees ids
// hearth gives it, and each client gets back the ids it sent, though both
// sent the same.
func Example() {
	var r *route.Router
	r = route.New(route.Options{Name: "tiny", Wake: func() { go upstream(r) }})
	a, b := make(frames, 16), make(frames, 16)
	ca, cb := r.Attach(a, nil), r.Attach(b, nil)

	for _, c := range []struct {
		name   string
		client *route.Client
		peer   frames
	}{{"a", ca, a}, {"b", cb, b}} {
		c.client.Handle([]byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"` + c.name + `","version":"1"}}}`))
		init := c.peer.next()
		var server struct {
			ServerInfo struct{ Name string } `json:"serverInfo"`
		}
		json.Unmarshal(init["result"], &server)
		fmt.Printf("client %s: initialize id %s, server %s\n", c.name, init["id"], server.ServerInfo.Name)
		c.client.Handle([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
		c.client.Handle([]byte(`{"jsonrpc":"2.0","id":"list","method":"tools/list"}`))
		list := c.peer.next()
		fmt.Printf("client %s: tools/list id %s, result %s\n", c.name, list["id"], list["result"])
	}
	// Output:
	// upstream: initialize with id 1
	// client a: initialize id 1, server tiny
	// upstream: tools/list with id 2
	// client a: tools/list id "list", result {"tools":[{"name":"echo","inputSchema":{"type":"object"}}]}
	// client b: initialize id 1, server tiny
	// upstream: tools/list with id 3
	// client b: tools/list id "list", result {"tools":[{"name":"echo","inputSchema":{"type":"object"}}]}
}
