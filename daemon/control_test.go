package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"go.uber.org/zap"

	"github.com/hearth-mcp/hearth/pkg/jsonrpc"
	"github.com/hearth-mcp/hearth/pkg/tool"
)

// Models get hosted_servers only when the config turns hosted_control on;
// the user's $/hearth/servers is there either way.
func TestHostedControlIsTheUsers(t *testing.T) {
	for _, on := range []bool{false, true} {
		home := t.TempDir()
		env := tool.Env{Home: home, Getenv: func(k string) string {
			if k == "HEARTH_HOME" {
				return home
			}
			return ""
		}, Log: zap.NewNop(), Version: "test"}
		d, err := New(Options{Config: Config{Mode: ModeStdio, HostedControl: on}, Log: zap.NewNop(), Env: env})
		if err != nil {
			t.Fatal(err)
		}
		if _, offered := d.Registry().Lookup("hosted_servers"); offered != on {
			t.Errorf("hosted_control %v: hosted_servers offered to models: %v", on, offered)
		}
		fn := d.controls()[ServersMethod]
		if fn == nil {
			t.Fatalf("hosted_control %v: no %s", on, ServersMethod)
		}
		_, err = fn(context.Background(), json.RawMessage(`{"action":"restart","name":"nosuch"}`))
		var je *jsonrpc.Error
		if !errors.As(err, &je) || je.Code != jsonrpc.CodeInvalidParams || !strings.Contains(je.Message, `no hosted server named "nosuch"`) {
			t.Errorf("restart of nothing: %v", err)
		} else if data, ok := je.Data.(map[string]any); !ok || data["ambiguous"] != false || data["matches"] == nil {
			t.Errorf("restart of nothing: data %#v, want the instances that run", je.Data)
		}
		if _, err := fn(context.Background(), json.RawMessage(`{"action":"forget","name":"nosuch"}`)); err == nil || !strings.Contains(err.Error(), "catalog") {
			t.Errorf("forget of nothing: %v", err)
		}
		for _, bad := range []string{`{"action":"kill","name":"x"}`, `{"action":"stop"}`, `[]`, `nope`} {
			if _, err := fn(context.Background(), json.RawMessage(bad)); err == nil || !strings.Contains(err.Error(), `takes {"action":"restart"|"stop"|"forget","name":NAME}`) {
				t.Errorf("%s: %v", bad, err)
			}
		}
		d.hosted.Close()
	}
}
