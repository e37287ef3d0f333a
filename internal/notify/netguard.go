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
// reach without --notify-allow-private: any special-purpose address (publicAddr), and
// the names that resolve to such addresses by convention.
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

// publicAddr reports whether a notification may connect to a: an address outside
// every special-purpose range (specialPurpose). An IPv4-mapped IPv6 address is judged
// by the IPv4 address it carries; a zone is ignored (fe80::1%eth0 is link-local).
func publicAddr(a netip.Addr) bool {
	if !a.IsValid() {
		return false
	}
	a = a.WithZone("").Unmap()
	if !a.IsGlobalUnicast() || a.IsPrivate() {
		return false
	}
	for _, p := range specialPurpose {
		if p.Contains(a) {
			return false
		}
	}
	return true
}

// specialPurpose are the ranges no notification goes to: every entry of the IANA IPv4
// and IPv6 Special-Purpose Address Registries (iana-ipv4-special-registry,
// iana-ipv6-special-registry) — private, loopback, link-local, documentation,
// benchmarking, translation and tunnelling prefixes, whose addresses either reach this
// network's own hosts or are not meant to be dialled at all — and multicast. Some
// registry entries are marked globally reachable (AS112, AMT, anycast services);
// they are refused too, as no person's receiver lives there.
var specialPurpose = []netip.Prefix{
	// IPv4 Special-Purpose Address Registry.
	netip.MustParsePrefix("0.0.0.0/8"),          // "this network" (RFC 791 §3.2; 0.0.0.0/32 "this host", RFC 1122)
	netip.MustParsePrefix("10.0.0.0/8"),         // private use (RFC 1918)
	netip.MustParsePrefix("100.64.0.0/10"),      // shared address space, carrier-grade NAT (RFC 6598)
	netip.MustParsePrefix("127.0.0.0/8"),        // loopback (RFC 1122)
	netip.MustParsePrefix("169.254.0.0/16"),     // link local, cloud metadata services (RFC 3927)
	netip.MustParsePrefix("172.16.0.0/12"),      // private use (RFC 1918)
	netip.MustParsePrefix("192.0.0.0/24"),       // IETF protocol assignments: DS-Lite, PCP/TURN anycast, NAT64 discovery (RFC 6890, 7335, 7600, 7723, 8155, 8880)
	netip.MustParsePrefix("192.0.2.0/24"),       // documentation, TEST-NET-1 (RFC 5737)
	netip.MustParsePrefix("192.31.196.0/24"),    // AS112-v4 (RFC 7535)
	netip.MustParsePrefix("192.52.193.0/24"),    // AMT (RFC 7450)
	netip.MustParsePrefix("192.88.99.0/24"),     // deprecated 6to4 relay anycast (RFC 7526)
	netip.MustParsePrefix("192.168.0.0/16"),     // private use (RFC 1918)
	netip.MustParsePrefix("192.175.48.0/24"),    // direct delegation AS112 service (RFC 7534)
	netip.MustParsePrefix("198.18.0.0/15"),      // benchmarking (RFC 2544)
	netip.MustParsePrefix("198.51.100.0/24"),    // documentation, TEST-NET-2 (RFC 5737)
	netip.MustParsePrefix("203.0.113.0/24"),     // documentation, TEST-NET-3 (RFC 5737)
	netip.MustParsePrefix("240.0.0.0/4"),        // reserved (RFC 1112 §4)
	netip.MustParsePrefix("255.255.255.255/32"), // limited broadcast (RFC 8190, RFC 919 §7)
	// IPv4 multicast (RFC 5771), from the multicast address space registry.
	netip.MustParsePrefix("224.0.0.0/4"),

	// IPv6 Special-Purpose Address Registry. IPv4-mapped addresses (::ffff:0:0/96,
	// RFC 4291) are judged by the IPv4 address they carry (publicAddr unmaps them).
	netip.MustParsePrefix("::/128"),            // unspecified (RFC 4291)
	netip.MustParsePrefix("::1/128"),           // loopback (RFC 4291)
	netip.MustParsePrefix("64:ff9b::/96"),      // IPv4-IPv6 translation, NAT64 (RFC 6052)
	netip.MustParsePrefix("64:ff9b:1::/48"),    // local-use IPv4/IPv6 translation (RFC 8215)
	netip.MustParsePrefix("100::/64"),          // discard-only (RFC 6666)
	netip.MustParsePrefix("100:0:0:1::/64"),    // dummy IPv6 prefix (RFC 9780)
	netip.MustParsePrefix("2001::/23"),         // IETF protocol assignments: Teredo, benchmarking, AMT, AS112, ORCHID, drone remote ID (RFC 2928, 4380, 5180, 7450, 7535, 7343, 9374)
	netip.MustParsePrefix("2001:db8::/32"),     // documentation (RFC 3849)
	netip.MustParsePrefix("2002::/16"),         // 6to4 (RFC 3056)
	netip.MustParsePrefix("2620:4f:8000::/48"), // direct delegation AS112 service (RFC 7534)
	netip.MustParsePrefix("3fff::/20"),         // documentation (RFC 9637)
	netip.MustParsePrefix("5f00::/16"),         // segment routing (SRv6) SIDs (RFC 9602)
	netip.MustParsePrefix("fc00::/7"),          // unique local (RFC 4193, RFC 8190)
	netip.MustParsePrefix("fe80::/10"),         // link-local unicast (RFC 4291)
	// Outside the registry, refused for the same reasons: IPv4-compatible addresses
	// (deprecated, RFC 4291 §2.5.5.1), deprecated site-local (RFC 3879) and IPv6
	// multicast (RFC 4291).
	netip.MustParsePrefix("::/96"),
	netip.MustParsePrefix("fec0::/10"),
	netip.MustParsePrefix("ff00::/8"),
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
