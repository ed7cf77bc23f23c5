// Package webguard is the DNS-rebinding guard of hearth's loopback HTTP
// endpoints: Streamable HTTP's /mcp (pkg/mcphttp) and the status page
// (pkg/statuspage) refuse a request whose Host is not a loopback host or
// whose Origin is not a loopback origin.
package webguard

import (
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
)

// The DNS-rebinding guard. A web page the user opens can make the browser
// send requests to 127.0.0.1 under a name the page's owner controls (its
// DNS answer changed to 127.0.0.1 after the page loaded): the browser then
// names that host in Host and the page's site in Origin. Requiring Host to
// name a loopback host, and any Origin to be a loopback origin, refuses
// such requests whatever the attacker's DNS says; clients that are not
// browsers send no Origin and name the address they connected to.

// CheckHost returns why Host is refused ("" when it names a loopback host).
func CheckHost(host string) string {
	if host == "" {
		return "the request names no Host"
	}
	if !LoopbackHost(host) {
		return "Host " + strconv.Quote(clip(host)) + " is not a loopback host (localhost, 127.0.0.1 or [::1]); this endpoint serves local clients only"
	}
	return ""
}

// CheckOrigin returns why an Origin is refused ("" when there is none, or it
// is a loopback origin).
func CheckOrigin(values []string) string {
	for _, v := range values {
		u, err := url.Parse(strings.TrimSpace(v))
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Path != "" || !LoopbackHost(u.Host) {
			return "Origin " + strconv.Quote(clip(v)) + " is not a local origin; requests from web pages of other sites are refused"
		}
	}
	return ""
}

// LoopbackHost reports whether host[:port] names the loopback interface.
func LoopbackHost(hostport string) bool {
	host := hostport
	if h, port, err := net.SplitHostPort(hostport); err == nil {
		if _, perr := strconv.ParseUint(port, 10, 16); perr != nil {
			return false
		}
		host = h
	} else if strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]") {
		host = host[1 : len(host)-1]
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Zone() == "" && ip.IsLoopback()
}

func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}
