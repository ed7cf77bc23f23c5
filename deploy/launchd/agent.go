// Package launchd renders hearth's macOS LaunchAgent for
// `hearthd install-service`: the daemon started at login and started again
// if it fails, as the systemd units do on Linux (docs/decisions/0044-platforms.md).
package launchd

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"path/filepath"
)

// Label names the agent to launchctl and is its file's name.
const Label = "dev.hearth.hearthd"

// Agent is the property list to install and where it goes.
type Agent struct {
	Path    string // ~/Library/LaunchAgents/dev.hearth.hearthd.plist
	Content string
}

// Render returns the agent for the hearthd at the absolute path hearthd,
// for the user whose home directory is home. launchd does not search PATH,
// so the path is absolute. The daemon runs `serve`; RunAtLoad starts it at
// login, and KeepAlive with SuccessfulExit false starts it again only after
// a failure: an idle exit (status 0) stays exited, and the shim starts it
// when a client next needs it. Its standard error goes to
// ~/Library/Logs/hearthd.log, where Console finds it.
func Render(hearthd, home string) (Agent, error) {
	if !filepath.IsAbs(hearthd) {
		return Agent{}, fmt.Errorf("hearthd path %q must be absolute", hearthd)
	}
	if !filepath.IsAbs(home) {
		return Agent{}, fmt.Errorf("home directory %q must be absolute", home)
	}
	var b bytes.Buffer
	b.WriteString(xml.Header)
	b.WriteString(`<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">` + "\n")
	b.WriteString("<plist version=\"1.0\">\n<dict>\n")
	key := func(k string) { fmt.Fprintf(&b, "\t<key>%s</key>\n", esc(k)) }
	str := func(indent, s string) { fmt.Fprintf(&b, "%s<string>%s</string>\n", indent, esc(s)) }
	key("Label")
	str("\t", Label)
	key("ProgramArguments")
	b.WriteString("\t<array>\n")
	str("\t\t", hearthd)
	str("\t\t", "serve")
	b.WriteString("\t</array>\n")
	key("RunAtLoad")
	b.WriteString("\t<true/>\n")
	key("KeepAlive")
	b.WriteString("\t<dict>\n\t\t<key>SuccessfulExit</key>\n\t\t<false/>\n\t</dict>\n")
	key("ProcessType")
	str("\t", "Background")
	key("StandardErrorPath")
	str("\t", filepath.Join(home, "Library", "Logs", "hearthd.log"))
	b.WriteString("</dict>\n</plist>\n")
	return Agent{Path: filepath.Join(home, "Library", "LaunchAgents", Label+".plist"), Content: b.String()}, nil
}

// esc escapes s as XML character data.
func esc(s string) string {
	var b bytes.Buffer
	xml.EscapeText(&b, []byte(s))
	return b.String()
}

// Program reads back the program an installed agent runs: the first string
// of its ProgramArguments (or its Program key), so `hearthd status` can say
// which hearthd launchd starts. It reads any well-formed property list, not
// only one Render wrote: the user may have edited it.
func Program(content []byte) (string, error) {
	d := xml.NewDecoder(bytes.NewReader(content))
	d.Strict = true
	depth := 0      // of <dict>, <array>: only the top dict's keys count
	lastKey := ""   // the top dict's key whose value comes next
	inArgs := false // inside the top dict's ProgramArguments array
	var text []byte
	for {
		tok, err := d.Token()
		if err != nil {
			if err == io.EOF {
				return "", fmt.Errorf("no ProgramArguments or Program in the property list")
			}
			return "", fmt.Errorf("not a well-formed property list: %w", err)
		}
		switch v := tok.(type) {
		case xml.StartElement:
			text = text[:0]
			switch v.Name.Local {
			case "dict", "array":
				depth++
				if depth == 2 && v.Name.Local == "array" && lastKey == "ProgramArguments" {
					inArgs = true
				}
			}
		case xml.CharData:
			text = append(text, v...)
		case xml.EndElement:
			switch v.Name.Local {
			case "dict", "array":
				depth--
				if inArgs && depth == 1 {
					return "", fmt.Errorf("ProgramArguments is empty")
				}
			case "key":
				if depth == 1 {
					lastKey = string(text)
				}
			case "string":
				if inArgs && depth == 2 || depth == 1 && lastKey == "Program" {
					return string(text), nil
				}
			}
		}
	}
}
