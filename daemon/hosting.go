package daemon

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/hearth-mcp/hearth/pkg/command"
	"github.com/hearth-mcp/hearth/pkg/config"
	"github.com/hearth-mcp/hearth/pkg/hello"
	"github.com/hearth-mcp/hearth/pkg/hosted"
	"github.com/hearth-mcp/hearth/pkg/mcp"
)

// host attaches a hosted session to its instance (mcp.Options.Host).
func (d *Daemon) host(req mcp.HostRequest, w mcp.Writer, gone func(error)) (mcp.Dispatcher, error) {
	var rr hello.Run // the "run" member of the shim's hello, decoded once
	if err := json.Unmarshal(req.Run, &rr); err != nil {
		return nil, fmt.Errorf("the shim's run request is malformed: %v", err)
	}
	spec, err := d.hostedSpec(rr)
	if err != nil {
		return nil, err
	}
	if spec.Sharing == hosted.PerClient {
		// What the client adds to every server it starts (a session id
		// and such): only an instance that is the client's own is given
		// it, and it is no part of the key (decision 0036).
		spec.ClientEnv = envList(rr.ClientEnv)
	}
	tag := ""
	if req.ShimPID > 0 {
		tag = "shim:" + strconv.Itoa(req.ShimPID)
	}
	return d.hosted.Attach(spec, req.Cwd, req.Conn, tag, w, gone)
}

// hostedSpec turns a hello's run into what to run: the config's [servers.NAME]
// as the config stands now (a SIGHUP applies to the clients that come
// after it), or the command as given, shared by directory.
func (d *Daemon) hostedSpec(rr hello.Run) (hosted.Spec, error) {
	env := envList(rr.Env)
	share, err := hosted.ParseSharing(rr.Sharing)
	if err != nil {
		return hosted.Spec{}, err
	}
	var servers map[string]config.Server
	var file string
	if s := d.Settings(); s != nil {
		servers = s.Servers()
		file, _ = s.File()
	}
	known := func() string {
		names := make([]string, 0, len(servers))
		for n := range servers {
			names = append(names, n)
		}
		sort.Strings(names)
		if len(names) == 0 {
			return "none is defined"
		}
		return "defined: " + strings.Join(names, ", ")
	}
	if rr.Name != "" && rr.Command != "" {
		// `hearth run WORD ARGS...`: the configured server of that name
		// when there is one and no arguments, else the command.
		_, configured := servers[rr.Name]
		switch {
		case configured && len(rr.Args) > 0:
			return hosted.Spec{}, fmt.Errorf("%q is a server of the config file %s ([servers.%s]), which takes no arguments; to run the command %s instead, write hearth run -- %s ARGS",
				rr.Name, file, rr.Name, rr.Name, rr.Name)
		case !configured && !filepath.IsAbs(command.Resolve(rr.Command)):
			return hosted.Spec{}, fmt.Errorf("%q is neither a server of the config file %s (%s) nor a command on your PATH or the daemon's; add a [servers.%s] table, or give the command's path",
				rr.Name, file, known(), rr.Name)
		case !configured:
			rr.Name = ""
		}
	}
	if rr.Name != "" {
		sv, ok := servers[rr.Name]
		if !ok {
			return hosted.Spec{}, fmt.Errorf("no server named %q in the config file %s (%s); add a [servers.%s] table, or run the command inline: hearth run COMMAND ARGS",
				rr.Name, file, known(), rr.Name)
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
		if sv.URL != "" {
			headers := make([]string, 0, len(sv.Headers))
			for k, v := range sv.Headers {
				headers = append(headers, k+": "+v)
			}
			sort.Strings(headers)
			if rr.Sharing == "" {
				sharing = hosted.Global
				if sv.Sharing != "" {
					sharing, _ = hosted.ParseSharing(sv.Sharing)
				}
			}
			return hosted.Spec{Name: rr.Name, Entry: rr.Entry, URL: sv.URL, Headers: headers,
				Client:  hosted.RemoteClient{ID: sv.ClientID, Secret: sv.ClientSecret, Issuer: sv.ClientIssuer},
				Sharing: sharing, IdleTimeout: sv.IdleTimeout, InitTimeout: remoteInit(sv.InitTimeout), AnswerTimeout: sv.AnswerTimeout, Restart: sv.Restart,
				Prestart: sv.Prestart, NoCatalog: sv.NoCatalog}, nil
		}
		return hosted.Spec{Name: rr.Name, Entry: rr.Entry, Command: command.Resolve(sv.Command), Args: sv.Args, Env: envList(merged), Dir: sv.Cwd,
			Sharing: sharing, IdleTimeout: sv.IdleTimeout, InitTimeout: sv.InitTimeout, AnswerTimeout: sv.AnswerTimeout, Restart: sv.Restart,
			Prestart: sv.Prestart, NoCatalog: sv.NoCatalog, Queue: specQueue(sv.Queue), MaxInstances: sv.MaxInstances}, nil
	}
	if rr.URL != "" {
		if err := config.CheckRemoteURL(rr.URL); err != nil {
			return hosted.Spec{}, fmt.Errorf("hearth run --url: %v", err)
		}
		// hearth run --url: shared by every window unless --share says
		// otherwise (a remote server has no directory to run in).
		if rr.Sharing == "" {
			share = hosted.Global
		}
		return hosted.Spec{Entry: rr.Entry, URL: rr.URL, Headers: rr.Headers, Sharing: share, InitTimeout: remoteInitTimeout}, nil
	}
	if strings.TrimSpace(rr.Command) == "" {
		return hosted.Spec{}, errors.New("no command to run: use hearth run COMMAND ARGS... or hearth run NAME")
	}
	return hosted.Spec{Entry: rr.Entry, Command: command.Resolve(rr.Command), Args: rr.Args, Env: env, Sharing: share}, nil
}

// helloRunNamed is the run of `hearth run NAME`.
func helloRunNamed(name string) hello.Run { return hello.Run{Name: name, Command: name} }

// remoteInit is a remote server's init timeout: its initialize may wait
// for a sign-in.
func remoteInit(d time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return remoteInitTimeout
}

func envList(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k, v := range m {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

// specQueue is a config's queue as a Spec takes it: unset (-1) is the
// default (0), and 0, no queue, is negative.
func specQueue(q int) int {
	switch {
	case q < 0:
		return 0
	case q == 0:
		return -1
	}
	return q
}
