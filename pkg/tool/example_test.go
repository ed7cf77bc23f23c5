package tool_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/hearth-mcp/hearth/pkg/tool"
)

// greetArgs is what the greet tool takes: one property per field, the
// optional one tagged omitempty, its default filled in by the binder.
type greetArgs struct {
	Name  string `json:"name"`
	Greet string `json:"greeting,omitempty"`
}

// greeting is what greet answers; its output schema is derived from it.
type greeting struct {
	Text string `json:"text" jsonschema:"The greeting."`
}

// A tool declared with tool.For and a typed handler: the registry checks
// greetArgs against the input schema when the tool is added, and a call's
// checked arguments are bound to it before the handler runs.
func ExampleFor() {
	greet := tool.For(tool.Tool{
		Name:        "greet",
		Title:       "Greet",
		Description: "Greets someone.",
		InputSchema: tool.Object(
			tool.Prop("name", `{"type":"string","minLength":1,"title":"Name","description":"Who to greet."}`).Required(),
			tool.Prop("greeting", `{"type":"string","default":"Hello","title":"Greeting","description":"The word to greet with."}`)),
		SchemaVersion: 1,
	}, func(ctx context.Context, call *tool.Call, in greetArgs) (greeting, error) {
		return greeting{Text: in.Greet + ", " + in.Name + "!"}, nil
	})

	reg := tool.NewRegistry("example")
	if err := reg.Add(greet); err != nil {
		fmt.Println("refused:", err)
		return
	}
	e, _ := reg.Lookup("greet")
	fmt.Printf("outputSchema: %s\n", e.Definition().OutputSchema)

	// What the daemon does with a tools/call: check the arguments against
	// the schema, then run the handler on them.
	call := func(args string) {
		checked, bad := e.CheckArgs(json.RawMessage(args))
		if bad != nil {
			fmt.Println("error:", bad.Code, bad.Message)
			return
		}
		res, err := e.Handler(context.Background(), tool.NewCall("greet", checked, nil, tool.Client{}, nil))
		if err != nil {
			fmt.Println("error:", err)
			return
		}
		b, _ := json.Marshal(res)
		fmt.Printf("%s\n", b)
	}
	call(`{"name":"Ada"}`)
	call(`{"name":"Ada","greeting":"Hi"}`)
	call(`{"name":""}`)
	// Output:
	// outputSchema: {"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","required":["text"],"properties":{"text":{"type":"string","description":"The greeting."}}}
	// {"text":"Hello, Ada!"}
	// {"text":"Hi, Ada!"}
	// error: INVALID_REQUEST invalid arguments for greet: /name: minLength: got 0, want 1
}
