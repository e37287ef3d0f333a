package notify

import (
	"net/netip"
	"testing"
)

// ianaSpecialPurpose is every range of the IANA IPv4 and IPv6 Special-Purpose Address
// Registries, and multicast, written out here rather than read from the guard's own
// list, so that a range dropped from the guard fails this test.
var ianaSpecialPurpose = []string{
	"0.0.0.0/8", "0.0.0.0/32", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16", "172.16.0.0/12",
	"192.0.0.0/24", "192.0.0.0/29", "192.0.0.8/32", "192.0.0.9/32", "192.0.0.10/32", "192.0.0.170/32", "192.0.0.171/32",
	"192.0.2.0/24", "192.31.196.0/24", "192.52.193.0/24", "192.88.99.0/24", "192.168.0.0/16", "192.175.48.0/24",
	"198.18.0.0/15", "198.51.100.0/24", "203.0.113.0/24", "240.0.0.0/4", "255.255.255.255/32", "224.0.0.0/4",

	"::/128", "::1/128", "::ffff:0:0/96", "64:ff9b::/96", "64:ff9b:1::/48", "100::/64", "100:0:0:1::/64",
	"2001::/23", "2001::/32", "2001:1::1/128", "2001:1::2/128", "2001:1::3/128", "2001:2::/48", "2001:3::/32",
	"2001:4:112::/48", "2001:10::/28", "2001:20::/28", "2001:30::/28", "2001:db8::/32", "2002::/16",
	"2620:4f:8000::/48", "3fff::/20", "5f00::/16", "fc00::/7", "fe80::/10", "ff00::/8",
}

// lastAddr is the highest address of p.
func lastAddr(p netip.Prefix) netip.Addr {
	b := p.Masked().Addr().AsSlice()
	for i := p.Bits(); i < len(b)*8; i++ {
		b[i/8] |= 0x80 >> (i % 8)
	}
	a, _ := netip.AddrFromSlice(b)
	return a
}

func TestAddressGuardRefusesEverySpecialPurposeRange(t *testing.T) {
	var prefixes []netip.Prefix
	for _, s := range ianaSpecialPurpose {
		prefixes = append(prefixes, netip.MustParsePrefix(s))
	}
	prefixes = append(prefixes, specialPurpose...)
	for _, p := range prefixes {
		for _, a := range []netip.Addr{p.Masked().Addr(), lastAddr(p)} {
			if publicAddr(a) {
				t.Errorf("%s (in %s) is allowed; want refused", a, p)
			}
			if !privateHost(a.String()) {
				t.Errorf("host %s (in %s) passes the settings check; want refused", a, p)
			}
			if a.Is4() {
				if mapped := netip.AddrFrom16(a.As16()); publicAddr(mapped) {
					t.Errorf("%s (IPv4-mapped %s) is allowed; want refused", mapped, p)
				}
			}
		}
	}
	for _, s := range []string{"fe80::1%eth0", "::ffff:127.0.0.1", "::ffff:198.18.0.1", "::127.0.0.1", "ff02::1%2"} {
		if publicAddr(netip.MustParseAddr(s)) {
			t.Errorf("%s is allowed; want refused", s)
		}
	}
	if publicAddr(netip.Addr{}) {
		t.Error("the zero address is allowed")
	}
}

func TestAddressGuardAllowsPublicAddresses(t *testing.T) {
	for _, s := range []string{
		"8.8.8.8", "1.1.1.1", "9.255.255.255", "11.0.0.0", "100.63.255.255", "100.128.0.0", "126.255.255.255",
		"128.0.0.0", "169.253.255.255", "172.15.255.255", "172.32.0.0", "192.0.1.255", "192.0.3.0", "192.88.98.255",
		"192.167.255.255", "192.169.0.0", "198.17.255.255", "198.20.0.0", "198.51.99.255", "203.0.112.255",
		"223.255.255.255", "::ffff:8.8.8.8",
		"2606:4700:4700::1111", "2001:4860:4860::8888", "2001:200::1", "2001:db7:ffff::1", "2001:db9::1",
		"2003::1", "2a00:1450:4001::1",
	} {
		a := netip.MustParseAddr(s)
		if !publicAddr(a) {
			t.Errorf("%s is refused; want allowed", s)
		}
		if privateHost(a.String()) {
			t.Errorf("host %s fails the settings check; want allowed", s)
		}
	}
}
