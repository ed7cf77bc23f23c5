package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	"go.uber.org/zap"

	"github.com/hearth-mcp/hearth/pkg/jsonrpc"
	"github.com/hearth-mcp/hearth/pkg/mcp"
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

// $/hearth/stop answers this daemon's pid and ends Run's context only once
// its answer is out (ThenReply's After), with its own reason; a signal's
// end keeps "signal"; params that are not an object are refused.
func TestStopControl(t *testing.T) {
	home := t.TempDir()
	env := tool.Env{Home: home, Getenv: func(k string) string {
		if k == "HEARTH_HOME" {
			return home
		}
		return ""
	}, Log: zap.NewNop(), Version: "test"}
	d, err := New(Options{Config: Config{Mode: ModeStdio}, Log: zap.NewNop(), Env: env})
	if err != nil {
		t.Fatal(err)
	}
	defer d.hosted.Close()
	fn := d.controls()[StopMethod]
	if fn == nil {
		t.Fatalf("no %s", StopMethod)
	}
	for _, bad := range []string{`[]`, `nope`, `"x"`, `1`} {
		var je *jsonrpc.Error
		if _, err := fn(context.Background(), json.RawMessage(bad)); !errors.As(err, &je) || je.Code != jsonrpc.CodeInvalidParams || !strings.Contains(je.Message, "takes {}") {
			t.Errorf("%s: %v", bad, err)
		}
	}
	ctx, disarm := d.stopper.arm(context.Background())
	defer disarm()
	res, err := fn(context.Background(), json.RawMessage(`{}`))
	tr, ok := res.(mcp.ThenReply)
	if err != nil || !ok || tr.After == nil {
		t.Fatalf("stop: %#v %v, want a reply then the stop", res, err)
	}
	if got, _ := tr.Result.(map[string]int); got["pid"] != os.Getpid() {
		t.Fatalf("stop answered %#v, want pid %d", tr.Result, os.Getpid())
	}
	if ctx.Err() != nil {
		t.Fatal("stopped before the answer was written")
	}
	tr.After()
	if ctx.Err() == nil || stopReason(ctx) != "hearthd stop" {
		t.Fatalf("after the answer: %v, reason %q", ctx.Err(), stopReason(ctx))
	}
	signalled, cancel := d.stopper.arm(context.Background())
	cancel()
	if stopReason(signalled) != "signal" {
		t.Fatalf("a signal's end reads %q", stopReason(signalled))
	}
}
