package route

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

var goodInit = json.RawMessage(`{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}`)

// The bad-input table of an upstream's initialize result: each is refused
// by the live path (the client gets a valid error naming what is wrong,
// and the upstream is stopped) as a catalog entry holding it is.
var badInitResults = []struct{ result, why string }{
	{`null`, "not an object"},
	{`"str"`, "not an object"},
	{`[1,2]`, "not an object"},
	{`7`, "not an object"},
	{`{}`, "no protocolVersion"},
	{`{"protocolVersion":5,"capabilities":{},"serverInfo":{"name":"s"}}`, "no protocolVersion"},
	{`{"protocolVersion":"2025-11-25","serverInfo":{"name":"s"}}`, "no capabilities"},
	{`{"protocolVersion":"2025-11-25","capabilities":[],"serverInfo":{"name":"s"}}`, "no capabilities"},
	{`{"protocolVersion":"2025-11-25","capabilities":{}}`, "no serverInfo"},
	{`{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":"s"}`, "no serverInfo"},
	{`{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":7}}`, "no serverInfo"},
}

func TestInvalidInitializeResultFailsTheStart(t *testing.T) {
	for _, tc := range badInitResults {
		t.Run(tc.result, func(t *testing.T) {
			s := newScripted(t)
			c := s.client()
			c.send(strings.Replace(initReq, "%s", "1", 1))
			s.reply(s.expect("initialize"), `"result":`+tc.result)
			m := c.response()
			e, _ := m["error"].(map[string]any)
			if e == nil || e["code"] != float64(CodeUpstream) || !strings.Contains(e["message"].(string), "invalid response to initialize") ||
				!strings.Contains(e["message"].(string), tc.why) {
				t.Fatalf("%s answered %s", tc.result, m["_text"])
			}
			s.mu.Lock()
			defer s.mu.Unlock()
			if len(s.trouble) != 1 {
				t.Fatalf("trouble %v: the upstream must be stopped", s.trouble)
			}
		})
	}
}

// The bad-input table of a catalog: every malformed initialize result, list
// page, DiscoverResult and invalid UTF-8 is refused by CheckCatalog, and a
// router is seeded only with what passes.
func TestCheckCatalog(t *testing.T) {
	params := json.RawMessage(`{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"hearth","version":"1"}}`)
	good := Catalog{InitParams: params, InitResult: goodInit, Lists: map[string][]json.RawMessage{
		"tools/list": {json.RawMessage(`{"tools":[{"name":"a","inputSchema":{"type":"object"}}],"nextCursor":"2"}`), json.RawMessage(`{"tools":[]}`)},
	}}
	if err := CheckCatalog(good); err != nil {
		t.Fatal(err)
	}
	bad := map[string]Catalog{}
	for _, tc := range badInitResults {
		c := good
		c.InitResult = json.RawMessage(tc.result)
		bad["initResult "+tc.result] = c
	}
	for name, pages := range map[string][]string{
		"a page that is an array":    {`[1]`},
		"a page that is a string":    {`"tools"`},
		"a page that is null":        {`null`},
		"no tools member":            {`{"prompts":[]}`},
		"tools not an array":         {`{"tools":"a"}`},
		"a tool that is no object":   {`{"tools":[1]}`},
		"a cursor that is no string": {`{"tools":[],"nextCursor":5}`},
		"invalid UTF-8":              {"{\"tools\":[{\"name\":\"\xff\"}]}"},
		"no page at all":             {},
	} {
		c := good
		c.Lists = map[string][]json.RawMessage{"tools/list": nil}
		for _, p := range pages {
			c.Lists["tools/list"] = append(c.Lists["tools/list"], json.RawMessage(p))
		}
		bad[name] = c
	}
	unknown := good
	unknown.Lists = map[string][]json.RawMessage{"tools/call": {json.RawMessage(`{"tools":[]}`)}}
	bad["a list hearth does not catalogue"] = unknown
	noParams := good
	noParams.InitParams = nil
	bad["no initialize params"] = noParams
	badUTF := good
	badUTF.InitResult = json.RawMessage("{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},\"serverInfo\":{\"name\":\"\xc3\"}}")
	bad["an initResult of invalid UTF-8"] = badUTF
	modern := Catalog{InitParams: params, Discover: json.RawMessage(`{"supportedVersions":["2027-01-01"],"capabilities":{}}`), DiscoverTTL: time.Hour, Fetched: time.Now()}
	bad["a DiscoverResult of another version"] = modern
	neither := good
	neither.InitResult = nil
	bad["neither result"] = neither
	for name, c := range bad {
		if err := CheckCatalog(c); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
