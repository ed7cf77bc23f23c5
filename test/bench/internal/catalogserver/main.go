// Command catalogserver is the smallest stdio MCP server the catalog
// benchmarks could start: it answers initialize and the first page of each
// list from one of hearth's catalog entries (the file named by its one
// argument, ~/.local/state/hearth/catalog/KEY.json), so with the same
// bytes hearth's daemon answers, from memory, and anything else with an
// error. BenchmarkTSClientCatalog starts ten of them as a client would its
// servers: what remains is the cost of the client's ten spawns and its own
// work, the lower bound of any way to serve it
// (docs/decisions/0045-hosted-catalog.md, the measurement).
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: catalogserver ENTRY.json")
		os.Exit(2)
	}
	raw, err := os.ReadFile(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	var entry struct {
		InitResult json.RawMessage              `json:"initResult"`
		Lists      map[string][]json.RawMessage `json:"lists"`
	}
	if err := json.Unmarshal(raw, &entry); err != nil || entry.InitResult == nil {
		fmt.Fprintf(os.Stderr, "%s is not a catalog entry: %v\n", os.Args[1], err)
		os.Exit(1)
	}
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 64<<10), 64<<20)
	out := bufio.NewWriter(os.Stdout)
	for in.Scan() {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(in.Bytes(), &req) != nil || req.ID == nil {
			continue // a notification (or not JSON-RPC): nothing owed
		}
		result := entry.InitResult
		if req.Method != "initialize" {
			pages := entry.Lists[req.Method]
			if len(pages) == 0 {
				fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"not in the catalog entry"}}`+"\n", req.ID)
				out.Flush()
				continue
			}
			result = pages[0]
		}
		fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"result":%s}`+"\n", req.ID, result)
		out.Flush()
	}
}
