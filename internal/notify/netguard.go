package notify

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"syscall"
	"time"
)

// privateHost reports whether a URL's host names an address a notification must not
// reach without --notify-allow-private: loopback, private, link-local, unspecified or
// other non-global addresses, and the names that resolve to them by convention.
func privateHost(host string) bool {
	h := strings.TrimSuffix(strings.ToLower(host), ".")
	if h == "localhost" || strings.HasSuffix(h, ".localhost") || strings.HasSuffix(h, ".local") ||
		strings.HasSuffix(h, ".internal") || !strings.Contains(h, ".") && net.ParseIP(h) == nil {
		return true
	}
	if a, err := netip.ParseAddr(h); err == nil {
		return !publicAddr(a)
	}
	return false
}

// publicAddr reports whether a is a global unicast address outside the private ranges.
func publicAddr(a netip.Addr) bool {
	a = a.Unmap()
	if !a.IsGlobalUnicast() || a.IsPrivate() {
		return false
	}
	// Carrier-grade NAT (100.64.0.0/10) and the IPv6 unique-local range are private in
	// practice; IsPrivate covers fc00::/7 but not CGNAT.
	return !netip.MustParsePrefix("100.64.0.0/10").Contains(a)
}

// errPrivateAddress is the refusal of a connection to a non-public address.
var errPrivateAddress = errors.New("refusing to connect to a private address (see --notify-allow-private)")

// HTTPClient is the client every channel that sends to a person's URL uses (webhooks,
// ntfy, Web Push). Unless allowPrivate, it refuses at connect time any address that is
// not public — a name that resolves, or re-resolves (DNS rebinding), to a private
// address is refused too — and it never follows redirects (a receiver could redirect
// into the private network). timeout bounds a whole request.
func HTTPClient(allowPrivate bool, timeout time.Duration) *http.Client {
	dialer := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
	if !allowPrivate {
		dialer.Control = func(network, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil {
				return fmt.Errorf("dial %s: %w", address, err)
			}
			if !publicAddr(ap.Addr()) {
				return errPrivateAddress
			}
			return nil
		}
	}
	tr := &http.Transport{
		DialContext:         dialer.DialContext,
		ForceAttemptHTTP2:   true,
		MaxIdleConns:        256,
		MaxIdleConnsPerHost: 64,
		IdleConnTimeout:     90 * time.Second,
		TLSHandshakeTimeout: 10 * time.Second,
	}
	return &http.Client{
		Transport: tr,
		Timeout:   timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}
