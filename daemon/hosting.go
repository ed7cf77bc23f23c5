package daemon

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hearth-mcp/hearth/pkg/config"
	"github.com/hearth-mcp/hearth/pkg/hosted"
	"github.com/hearth-mcp/hearth/pkg/mcp"
	"github.com/hearth-mcp/hearth/pkg/supervisor"
)

// runRequest is the "run" member of a shim's hello (docs/protocol.md,
// "Hosted servers"): a server of the config by name, or a command.
type runRequest struct {
	Name    string            `json:"name"`
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env"`
	Sharing string            `json:"sharing"` // --share: overrides the config's or the default
}

// host attaches a hosted session to its instance (mcp.Options.Host).
func (d *Daemon) host(req mcp.HostRequest, w mcp.HostWriter, gone func(error)) (mcp.Hosted, error) {
	spec, err := d.hostedSpec(req.Run)
	if err != nil {
		return nil, err
	}
	return d.hosted.Attach(spec, req.Cwd, req.Conn, w, gone)
}

// hostedSpec turns a hello's run into what to run: the config's [servers.NAME]
// as the config stands now (a SIGHUP applies to the clients that come
// after it), or the command as given, shared by directory.
func (d *Daemon) hostedSpec(raw json.RawMessage) (hosted.Spec, error) {
	var rr runRequest
	if err := json.Unmarshal(raw, &rr); err != nil {
		return hosted.Spec{}, fmt.Errorf("the shim's run request is malformed: %v", err)
	}
	env := envList(rr.Env)
	share, err := hosted.ParseSharing(rr.Sharing)
	if err != nil {
		return hosted.Spec{}, err
	}
	if rr.Name != "" {
		var servers map[string]config.Server
		var file string
		if s := d.Settings(); s != nil {
			servers = s.Servers()
			file, _ = s.File()
		}
		sv, ok := servers[rr.Name]
		if !ok {
			names := make([]string, 0, len(servers))
			for n := range servers {
				names = append(names, n)
			}
			sort.Strings(names)
			known := "none is defined"
			if len(names) > 0 {
				known = "defined: " + strings.Join(names, ", ")
			}
			return hosted.Spec{}, fmt.Errorf("no server named %q in the config file %s (%s); add a [servers.%s] table, or run the command inline: hearth run -- COMMAND ARGS",
				rr.Name, file, known, rr.Name)
		}
		sharing, _ := hosted.ParseSharing(sv.Sharing)
		if rr.Sharing != "" {
			sharing = share
		}
		// The config's environment, with what the client's entry set over it.
		merged := map[string]string{}
		for k, v := range sv.Env {
			merged[k] = v
		}
		for k, v := range rr.Env {
			merged[k] = v
		}
		return hosted.Spec{Name: rr.Name, Command: resolveCommand(sv.Command), Args: sv.Args, Env: envList(merged), Dir: sv.Cwd,
			Sharing: sharing, IdleTimeout: sv.IdleTimeout, InitTimeout: sv.InitTimeout, AnswerTimeout: sv.AnswerTimeout, Restart: sv.Restart}, nil
	}
	if strings.TrimSpace(rr.Command) == "" {
		return hosted.Spec{}, errors.New("no command to run: use hearth run -- COMMAND ARGS... or hearth run NAME")
	}
	return hosted.Spec{Command: resolveCommand(rr.Command), Args: rr.Args, Env: env, Sharing: share}, nil
}

// resolveCommand makes a bare command name absolute when the daemon finds
// it on its PATH (the shim resolves it on the client's PATH first).
func resolveCommand(cmd string) string {
	if filepath.IsAbs(cmd) || strings.ContainsRune(cmd, filepath.Separator) {
		return cmd
	}
	if p, err := supervisor.LookPath(cmd); err == nil {
		return p
	}
	return cmd
}

func envList(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k, v := range m {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

// HostedServers is the table of hosted server instances.
func (d *Daemon) HostedServers() *hosted.Table { return d.hosted }
