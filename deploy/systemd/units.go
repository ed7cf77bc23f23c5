// Package systemd holds hearth's systemd user units and renders them for
// `hearthd install-service`.
package systemd

import (
	_ "embed"
	"fmt"
	"path/filepath"
	"strings"
)

//go:embed hearthd.socket
var socketUnit string

//go:embed hearthd.service
var serviceUnit string

// Unit is one unit file to install.
type Unit struct {
	Name    string
	Content string
}

// Render returns the units with ExecStart naming hearthd by its absolute
// path (systemd does not search PATH for user units the way a shell does).
func Render(hearthd string) ([]Unit, error) {
	if !filepath.IsAbs(hearthd) {
		return nil, fmt.Errorf("hearthd path %q must be absolute", hearthd)
	}
	if strings.ContainsAny(hearthd, " \t\n\"'\\%$") {
		return nil, fmt.Errorf("hearthd path %q has characters a unit file would need to escape; install hearthd under a plain path", hearthd)
	}
	return []Unit{
		{Name: "hearthd.socket", Content: socketUnit},
		{Name: "hearthd.service", Content: strings.ReplaceAll(serviceUnit, "@HEARTHD@", hearthd)},
	}, nil
}

// Program reads back the program an installed hearthd.service starts: the
// first word of its ExecStart (after systemd's prefixes @, -, :, +, !), so
// `hearthd status` can say which hearthd the service runs.
func Program(service string) (string, error) {
	for _, line := range strings.Split(service, "\n") {
		key, value, ok := strings.Cut(strings.TrimSpace(line), "=")
		if !ok || strings.TrimSpace(key) != "ExecStart" {
			continue
		}
		value = strings.TrimLeft(strings.TrimSpace(value), "@-:+!")
		if word, _, _ := strings.Cut(value, " "); word != "" {
			return word, nil
		}
	}
	return "", fmt.Errorf("no ExecStart in the unit")
}
