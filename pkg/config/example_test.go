package config_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/hearth-mcp/hearth/pkg/config"
)

// Reading a config file: settings at the top, a [servers.NAME] table per
// hosted server, and the daemon's environment over the file.
func ExampleLoad() {
	dir, err := os.MkdirTemp("", "hearth-config")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "config.toml")
	os.WriteFile(path, []byte(`
log_level = "debug"
max_connections = 32

[servers.everything]
command = "npx"
args = ["-y", "@modelcontextprotocol/server-everything"]
sharing = "global"
idle_timeout = "2m"
`), 0o600)

	env := map[string]string{
		"HEARTH_CONFIG":          path, // the file to read
		"HEARTH_MAX_CONNECTIONS": "64", // the environment wins over the file
	}
	s, err := config.Load(func(k string) string { return env[k] })
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, v := range s.Sources() {
		if v.Key == "log_level" || v.Key == "max_connections" {
			fmt.Printf("%s = %s (from %s)\n", v.Key, v.Value, strings.Replace(v.Source, path, "config.toml", 1))
		}
	}
	fmt.Println("HEARTH_LOG_LEVEL:", s.Getenv("HEARTH_LOG_LEVEL"))
	e := s.Servers()["everything"]
	fmt.Printf("server %s: %s %s, sharing %s, idle after %v\n", e.Name, e.Command, strings.Join(e.Args, " "), e.Sharing, e.IdleTimeout)
	// Output:
	// max_connections = 64 (from env)
	// log_level = debug (from file config.toml)
	// HEARTH_LOG_LEVEL: debug
	// server everything: npx -y @modelcontextprotocol/server-everything, sharing global, idle after 2m0s
}
