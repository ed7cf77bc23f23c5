package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"time"

	"github.com/hearth-mcp/hearth/daemon"
	"github.com/hearth-mcp/hearth/pkg/config"
	"github.com/hearth-mcp/hearth/pkg/endpoint"
	"github.com/hearth-mcp/hearth/pkg/opener"
	"github.com/hearth-mcp/hearth/pkg/secret"
)

// loginCmd is `hearthd login NAME` and `hearthd logout NAME`: the daemon
// serving this data directory holds the remote server's tokens, so it
// signs in (its loopback listener receives the code) and the command
// opens the authorization URL it gives with the open_url setting's
// command, then waits for the sign-in to end.
func loginCmd(verb string, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	printOnly := false
	var names []string
	for _, a := range args {
		switch {
		case a == "--print" && verb == "login":
			printOnly = true
		case strings.HasPrefix(a, "-"):
			fmt.Fprintf(stderr, "hearthd %s: unexpected option %q (usage: hearthd %s NAME%s)\n", verb, a, verb, map[bool]string{true: " [--print]"}[verb == "login"])
			return 2
		default:
			names = append(names, a)
		}
	}
	if len(names) != 1 {
		fmt.Fprintf(stderr, "usage: hearthd %s NAME (a remote server: its [servers.NAME], or the name hearthd servers lists)\n", verb)
		return 2
	}
	name := names[0]
	home, err := endpoint.Home(getenv)
	if err != nil {
		fmt.Fprintf(stderr, "hearthd %s: %v\n", verb, err)
		return 1
	}
	socket, owned, err := statusSocket(home, getenv)
	if err != nil {
		fmt.Fprintf(stderr, "hearthd %s: %v\n", verb, err)
		return 1
	}
	ask := func(action string, timeout time.Duration, v any) error {
		raw, err := daemonRequest(socket, statusClientName, daemon.LoginMethod, map[string]any{"action": action, "name": name}, timeout)
		if err == nil {
			err = json.Unmarshal(raw, v)
		}
		if err != nil {
			if _, qerr := queryStatus(socket); qerr != nil {
				return errors.New(noneServes(home, socket, owned, qerr))
			}
		}
		return err
	}
	if verb == "logout" {
		var st struct{ State string }
		if err := ask("logout", 30*time.Second, &st); err != nil {
			fmt.Fprintln(stderr, "hearthd logout:", err)
			return 1
		}
		fmt.Fprintf(stdout, "signed out of %s: its next call needs a sign-in\n", name)
		return 0
	}
	var begun struct{ URL string }
	if err := ask("begin", time.Minute, &begun); err != nil || begun.URL == "" {
		fmt.Fprintln(stderr, "hearthd login:", err)
		return 1
	}
	if printOnly {
		fmt.Fprintln(stdout, begun.URL)
	} else if err := openLink(getenv, begun.URL); err != nil {
		fmt.Fprintf(stderr, "hearthd login: %v; open this link yourself:\n%s\n", err, begun.URL)
	} else {
		fmt.Fprintf(stdout, "opened the sign-in page of %s in your browser; waiting for you to sign in\n", name)
	}
	var st struct {
		State  string
		Issuer string
	}
	if err := ask("wait", daemon.SignInTimeout+30*time.Second, &st); err != nil {
		fmt.Fprintln(stderr, "hearthd login:", err)
		return 1
	}
	fmt.Fprintf(stdout, "signed in to %s (%s)\n", name, st.Issuer)
	return 0
}

// openLink opens a URL with the open_url setting's command.
func openLink(getenv func(string) string, u string) error {
	settings, err := config.Load(getenv)
	if err != nil {
		return err
	}
	argv, err := opener.Command(settings.Getenv(opener.Env), "", runtime.GOOS)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := opener.Open(ctx, argv, u); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return nil
}

const secretUsage = `usage: hearthd secret set NAME   (the value is read from stdin, never an argument)
       hearthd secret list
       hearthd secret rm NAME
A stored secret is named in a server's env or headers as ${secret:NAME} (docs/remote.md).`

// secretCmd is `hearthd secret set|list|rm`: the static secrets of the
// vault in the state directory, which the daemon reads as it starts a
// server (the vault is shared under a lock; no daemon need run).
func secretCmd(args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	if len(args) == 0 || (args[0] == "list" && len(args) != 1) || (args[0] != "list" && len(args) != 2) {
		fmt.Fprintln(stderr, secretUsage)
		return 2
	}
	dir, err := endpoint.StateDir(endpoint.Getenv(getenv))
	if err != nil {
		fmt.Fprintln(stderr, "hearthd secret:", err)
		return 1
	}
	v, err := secret.Open(secret.Options{Dir: dir})
	if err != nil {
		fmt.Fprintln(stderr, "hearthd secret:", err)
		return 1
	}
	switch args[0] {
	case "list":
		names, err := v.Names()
		if err != nil {
			fmt.Fprintln(stderr, "hearthd secret:", err)
			return 1
		}
		for _, n := range names {
			if s, ok := strings.CutPrefix(n, secret.Static("")); ok {
				fmt.Fprintln(stdout, s)
			}
		}
		return 0
	case "set":
		name := args[1]
		if _, err := secret.Refs("${secret:" + name + "}"); err != nil {
			fmt.Fprintln(stderr, "hearthd secret set: a name is 1 to 128 letters, digits, '.', '_' or '-'")
			return 2
		}
		r := bufio.NewReader(io.LimitReader(stdin, 1<<20+1))
		raw, err := io.ReadAll(r)
		if err != nil {
			fmt.Fprintln(stderr, "hearthd secret set: reading stdin:", err)
			return 1
		}
		if len(raw) > 1<<20 {
			fmt.Fprintln(stderr, "hearthd secret set: the value is over 1 MiB")
			return 2
		}
		value := strings.TrimRight(string(raw), "\r\n")
		if value == "" {
			fmt.Fprintln(stderr, "hearthd secret set: no value on stdin (pipe it in: hearthd secret set NAME < FILE)")
			return 2
		}
		if err := v.Set(secret.Static(name), value); err != nil {
			fmt.Fprintln(stderr, "hearthd secret set:", err)
			return 1
		}
		fmt.Fprintf(stdout, "stored %s (%s); name it as ${secret:%s}\n", name, v.Where(), name)
		return 0
	case "rm":
		name := args[1]
		if _, ok, err := v.Get(secret.Static(name)); err != nil || !ok {
			fmt.Fprintf(stderr, "hearthd secret rm: no secret named %q\n", name)
			return 1
		}
		if err := v.Delete(secret.Static(name)); err != nil {
			fmt.Fprintln(stderr, "hearthd secret rm:", err)
			return 1
		}
		fmt.Fprintf(stdout, "removed %s\n", name)
		return 0
	}
	fmt.Fprintln(stderr, secretUsage)
	return 2
}
