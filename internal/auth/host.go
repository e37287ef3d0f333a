package auth

import (
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
)

// HostGuard defends `--auth none` against DNS rebinding. Without an identity check,
// anything that can make a browser send a request to the listener acts as the single
// user; a web page can do that by pointing a name it controls at 127.0.0.1, and the
// browser then treats Gatehouse as that page's own origin. Such a request still carries
// the attacker's name in its Host header, so the guard accepts only the names the
// server is really known by: the host of --addr, the IP address the connection arrived
// on (a rebinding page can never make a browser send a bare IP literal of its choice as
// its own origin), the loopback spellings when the server listens on loopback, and the
// host of --public-url.
type HostGuard struct {
	// names are the configured host names (lower case, no port): --addr's host when it
	// is not a wildcard. They are accepted on the port of the listener the request came in
	// on, which is the real one even when --addr asked for port 0.
	names []string
	// public is --public-url's host and port ("" when unset).
	publicHost, publicPort string
	loopbackConfigured     bool
}

// NewHostGuard builds the guard from --addr and --public-url (both already validated).
func NewHostGuard(addr, publicURL string) *HostGuard {
	g := &HostGuard{}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	host = normalizeHost(host)
	if ip, err := netip.ParseAddr(host); err == nil {
		g.loopbackConfigured = ip.IsLoopback()
		if !ip.IsUnspecified() {
			g.names = append(g.names, ip.Unmap().String())
		}
	} else if host != "" {
		g.names = append(g.names, host)
		g.loopbackConfigured = host == "localhost"
	}
	if u, err := url.Parse(publicURL); err == nil && publicURL != "" {
		g.publicHost = normalizeHost(u.Hostname())
		g.publicPort = u.Port()
		if g.publicPort == "" {
			g.publicPort = map[string]string{"https": "443", "http": "80"}[u.Scheme]
		}
	}
	return g
}

// Allowed reports whether a request with this Host header, arriving on the local
// address local (http.LocalAddrContextKey; nil when unknown), is meant for this server.
func (g *HostGuard) Allowed(hostHeader string, local net.Addr) bool {
	host, port, err := net.SplitHostPort(hostHeader)
	if err != nil {
		host, port = hostHeader, "" // no port: the scheme's default one
	}
	host = normalizeHost(host)
	if host == "" {
		return false
	}
	portIs := func(want string) bool {
		if port == "" {
			return want == "80" || want == "443"
		}
		return port == want
	}
	if g.publicHost != "" && host == g.publicHost && portIs(g.publicPort) {
		return true
	}
	localIP, localPort, ok := splitLocal(local)
	if !ok {
		return false
	}
	if !portIs(localPort) {
		return false
	}
	names := append([]string{localIP.String()}, g.names...)
	if g.loopbackConfigured || localIP.IsLoopback() {
		names = append(names, "localhost", "127.0.0.1", "::1")
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		host = ip.Unmap().String() // one spelling of an address: ::ffff:127.0.0.1 is 127.0.0.1
	}
	for _, n := range names {
		if host == n {
			return true
		}
	}
	return false
}

// LoopbackListener reports whether addr (a listener's address) accepts connections
// from this machine only.
func LoopbackListener(addr net.Addr) bool {
	ip, _, ok := splitLocal(addr)
	return ok && ip.IsLoopback()
}

func splitLocal(a net.Addr) (netip.Addr, string, bool) {
	if a == nil {
		return netip.Addr{}, "", false
	}
	ap, err := netip.ParseAddrPort(a.String())
	if err != nil {
		return netip.Addr{}, "", false
	}
	return ap.Addr().Unmap().WithZone(""), strconv.Itoa(int(ap.Port())), true
}

// normalizeHost lower-cases a host name, drops IPv6 brackets and a trailing root dot
// ("localhost." is localhost).
func normalizeHost(h string) string {
	h = strings.ToLower(strings.TrimSpace(h))
	h = strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
	return strings.TrimSuffix(h, ".")
}
