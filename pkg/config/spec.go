package config

import (
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"time"

	"github.com/hearth-mcp/hearth/pkg/config/keys"
)

// kind is how a setting is written in the file and checked.
type kind int

const (
	kindString   kind = iota // any string
	kindPath                 // a directory: "~/" and relative paths resolve in the file
	kindURL                  // a URL (or a word such as "ollama"): a password in it is redacted
	kindSecret               // a string never shown
	kindDSN                  // a postgres:// URL or key/value DSN: its password is redacted
	kindInt                  // a TOML integer
	kindDuration             // a string such as "2s"
	kindOctal                // a string holding an octal permission such as "0600"
	kindLevel                // a log level
	kindBool                 // a TOML boolean; its variable holds "true" or "false"
	kindListen               // a loopback address and port, such as "127.0.0.1:8765"
	kindAuth                 // "token" or "none"
)

// spec is one setting's type, bounds, default and reload behaviour.
type spec struct {
	keys.Setting
	kind kind
	// min and max bound an integer (max 0: no upper bound) or, as
	// durations, a duration (max 0: no upper bound).
	min, max int64
	// zeroNever: a duration of "0" is allowed and means "never".
	zeroNever bool
	// def is the default as the variable would hold it ("" when unset).
	def string
	// live: a SIGHUP applies a change; otherwise it waits for a restart.
	live bool
	// example is shown in errors ("such as ...").
	example string
}

// types gives each setting of keys.Settings its type, bounds and default.
var types = map[string]spec{
	"schemas_dir":         {kind: kindPath, live: true},
	"examples_dir":        {kind: kindPath, live: true},
	"schemas_base_url":    {kind: kindURL, live: true},
	"max_batch":           {kind: kindInt, min: 1, def: strconv.Itoa(keys.DefaultMaxBatch)},
	"backend_url":         {kind: kindURL},
	"backend_assets_path": {kind: kindString, def: keys.DefaultBackendAssetsPath},
	"embed_url":           {kind: kindURL},
	"embed_model":         {kind: kindString},
	"llm_provider":        {kind: kindURL},
	"llm_url":             {kind: kindURL},
	"llm_model":           {kind: kindString},
	"llm_api_key":         {kind: kindSecret},
	"llm_timeout":         {kind: kindDuration, min: int64(time.Nanosecond), def: keys.DefaultLLMTimeout.String(), example: "20s"},
	"queue_depth":         {kind: kindInt, min: 1, max: 1 << 20, def: strconv.Itoa(keys.DefaultQueueDepth)},
	"max_calls":           {kind: kindInt, min: 1, max: 1024, def: strconv.Itoa(keys.DefaultMaxCalls)},
	"max_connections":     {kind: kindInt, min: 1, max: 1 << 20, def: strconv.Itoa(keys.DefaultMaxConnections)},
	"max_held_mb":         {kind: kindInt, min: 16, max: 1 << 20, def: strconv.Itoa(keys.DefaultMaxHeldMB)},
	"max_children":        {kind: kindInt, min: 1, max: 1024, def: strconv.Itoa(keys.DefaultMaxChildren)},
	"kill_grace":          {kind: kindDuration, min: int64(time.Millisecond), max: int64(time.Minute), def: keys.DefaultKillGrace.String(), example: "2s"},
	"drain_timeout":       {kind: kindDuration, min: int64(time.Nanosecond), def: keys.DefaultDrainTimeout.String(), example: "10s"},
	"idle_timeout":        {kind: kindDuration, zeroNever: true, example: "10m"},
	"log_level":           {kind: kindLevel, def: keys.DefaultLogLevel},
	"socket_mode":         {kind: kindOctal, def: fmt.Sprintf("%04o", keys.DefaultSocketMode)},
	"store_url":           {kind: kindDSN},
	"http_listen":         {kind: kindListen, example: "127.0.0.1:8765", live: true},
	"http_auth":           {kind: kindAuth, def: keys.DefaultHTTPAuth, example: "none", live: true},
	"hosted_control":      {kind: kindBool, def: strconv.FormatBool(keys.DefaultHostedControl)},
	"upgrade_handover":    {kind: kindBool, def: strconv.FormatBool(keys.DefaultUpgradeHandOver)},
	"open_url":            {kind: kindString, example: "firefox --new-window", live: true},
}

// specs is keys.Settings with their types, in its order.
var specs = func() []spec {
	out := make([]spec, 0, len(keys.Settings))
	for _, k := range keys.Settings {
		s, ok := types[k.Key]
		if !ok {
			panic("config: setting " + k.Key + " has no type")
		}
		s.Setting = k
		out = append(out, s)
	}
	if len(out) != len(types) {
		panic("config: a typed setting is missing from keys.Settings")
	}
	return out
}()

func specByVar(name string) (spec, bool) {
	for _, s := range specs {
		if s.Var == name {
			return s, true
		}
	}
	return spec{}, false
}

func specByKey(key string) (spec, bool) {
	for _, s := range specs {
		if s.Key == key {
			return s, true
		}
	}
	return spec{}, false
}

// want says what a setting accepts, for errors.
func (s spec) want() string {
	switch s.kind {
	case kindInt:
		if s.max == 0 {
			return fmt.Sprintf("want an integer of at least %d", s.min)
		}
		return fmt.Sprintf("want an integer from %d to %d", s.min, s.max)
	case kindDuration:
		switch {
		case s.zeroNever:
			return fmt.Sprintf("want a duration such as %q, or \"0\" for never", s.example)
		case s.max != 0:
			return fmt.Sprintf("want a duration from %s to %s such as %q", shortDuration(time.Duration(s.min)), shortDuration(time.Duration(s.max)), s.example)
		default:
			return fmt.Sprintf("want a positive duration such as %q", s.example)
		}
	case kindOctal:
		return `want an octal permission such as "0600"`
	case kindLevel:
		return "want debug, info, warn or error"
	case kindBool:
		return "want true or false"
	case kindListen:
		return fmt.Sprintf("want a loopback address and port such as %q", s.example)
	case kindAuth:
		return `want "token" (the default: a bearer token is required) or "none"`
	}
	return "want a string"
}

// shortDuration prints 1m0s as 1m.
func shortDuration(d time.Duration) string {
	switch {
	case d%time.Minute == 0:
		return strconv.FormatInt(int64(d/time.Minute), 10) + "m"
	case d%time.Second == 0:
		return strconv.FormatInt(int64(d/time.Second), 10) + "s"
	case d%time.Millisecond == 0:
		return strconv.FormatInt(int64(d/time.Millisecond), 10) + "ms"
	}
	return d.String()
}

// check validates a value in the form the variable holds. The error says
// what is wanted; the caller names the setting (and echoes the value only
// when it is not a secret).
func (s spec) check(v string) error {
	switch s.kind {
	case kindInt:
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < s.min || (s.max != 0 && n > s.max) {
			return fmt.Errorf("%s", s.want())
		}
	case kindDuration:
		d, err := time.ParseDuration(v)
		if err != nil {
			return fmt.Errorf("%s", s.want())
		}
		if s.zeroNever && d == 0 {
			return nil
		}
		if d < time.Duration(s.min) || d <= 0 || (s.max != 0 && d > time.Duration(s.max)) {
			return fmt.Errorf("%s", s.want())
		}
	case kindOctal:
		m, err := strconv.ParseUint(v, 8, 32)
		if err != nil || m > 0o777 {
			return fmt.Errorf("%s", s.want())
		}
	case kindLevel:
		switch v {
		case "debug", "info", "warn", "error":
		default:
			return fmt.Errorf("%s", s.want())
		}
	case kindBool:
		if v != "true" && v != "false" {
			return fmt.Errorf("%s", s.want())
		}
	case kindListen:
		return checkListen(v, s.want())
	case kindAuth:
		if v != "token" && v != "none" {
			return fmt.Errorf("%s", s.want())
		}
	}
	return nil
}

// checkListen: v is a loopback address and a port. Anyone who can reach
// the port could call the user's tools, so nothing else is served on.
func checkListen(v, want string) error {
	host, port, err := net.SplitHostPort(v)
	if err != nil {
		return fmt.Errorf("%s", want)
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return fmt.Errorf("the port must be a number from 0 to 65535")
	}
	if ip, err := netip.ParseAddr(host); host != "localhost" && (err != nil || !ip.IsLoopback()) {
		return fmt.Errorf("only a loopback address (127.0.0.1, [::1] or localhost) may be used: anyone who can reach the port could call your tools")
	}
	return nil
}

// Check validates the value of the setting variable name as the daemon
// reads it (from its environment or the file); the error names the
// variable, and the value unless it is a secret. A name that is not a
// setting variable is always fine.
func Check(name, v string) error {
	s, ok := specByVar(name)
	if !ok || v == "" {
		return nil
	}
	if err := s.check(v); err != nil {
		if s.kind == kindSecret || s.kind == kindDSN {
			return fmt.Errorf("%s: %v", name, err)
		}
		return fmt.Errorf("%s=%q: %v", name, v, err)
	}
	return nil
}

// Int reads an integer setting through getenv: ok is false when it is
// unset; the error names the variable and what it wants.
func Int(getenv func(string) string, name string) (n int, ok bool, err error) {
	v := getenv(name)
	if v == "" {
		return 0, false, nil
	}
	if err := Check(name, v); err != nil {
		return 0, false, err
	}
	i, err := strconv.Atoi(v)
	if err != nil {
		return 0, false, fmt.Errorf("%s=%q: not an integer", name, v)
	}
	return i, true, nil
}

// Bool reads a boolean setting through getenv: ok is false when it is
// unset; the error names the variable and what it wants.
func Bool(getenv func(string) string, name string) (b bool, ok bool, err error) {
	v := getenv(name)
	if v == "" {
		return false, false, nil
	}
	if err := Check(name, v); err != nil {
		return false, false, err
	}
	return v == "true", true, nil
}

// Duration reads a duration setting through getenv: ok is false when it is
// unset; the error names the variable and what it wants.
func Duration(getenv func(string) string, name string) (d time.Duration, ok bool, err error) {
	v := getenv(name)
	if v == "" {
		return 0, false, nil
	}
	if err := Check(name, v); err != nil {
		return 0, false, err
	}
	d, err = time.ParseDuration(v)
	if err != nil {
		return 0, false, fmt.Errorf("%s=%q: not a duration", name, v)
	}
	return d, true, nil
}
