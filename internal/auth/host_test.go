package auth

import (
	"net"
	"testing"
)

// TestHostGuard: the names a --auth none server answers to, for a listener on loopback
// and on every interface.
func TestHostGuard(t *testing.T) {
	loop := &net.TCPAddr{IP: net.ParseIP("127.0.0.1"), Port: 8080}
	lan := &net.TCPAddr{IP: net.ParseIP("192.168.1.5"), Port: 8080}
	cases := []struct {
		addr, public, host string
		local              net.Addr
		want               bool
	}{
		{"127.0.0.1:8080", "", "127.0.0.1:8080", loop, true},
		{"127.0.0.1:8080", "", "localhost:8080", loop, true},
		{"127.0.0.1:8080", "", "[::1]:8080", loop, true},
		{"127.0.0.1:8080", "", "[::ffff:127.0.0.1]:8080", loop, true},
		{"127.0.0.1:0", "", "127.0.0.1:8080", loop, true}, // the real port, not the asked-for 0
		{"127.0.0.1:8080", "", "127.0.0.1:9090", loop, false},
		{"127.0.0.1:8080", "", "evil.example:8080", loop, false},
		{"127.0.0.1:8080", "", "localhost.evil.example:8080", loop, false},
		{"localhost:8080", "", "localhost:8080", loop, true},
		{":8080", "", "192.168.1.5:8080", lan, true},
		{":8080", "", "localhost:8080", lan, false},
		{":8080", "", "gatehouse.lan:8080", lan, false},
		{"gatehouse.lan:8080", "", "Gatehouse.LAN:8080", lan, true},
		{"0.0.0.0:8080", "https://gh.example.com", "gh.example.com", lan, true},
		{"0.0.0.0:8080", "https://gh.example.com", "gh.example.com:443", lan, true},
		{"0.0.0.0:8080", "https://gh.example.com", "gh.example.com:8080", lan, false},
		{"0.0.0.0:8080", "http://gh.example.com:9000", "gh.example.com:9000", nil, true},
		{"127.0.0.1:8080", "", "127.0.0.1:8080", nil, false}, // unknown listener: only --public-url
		{"127.0.0.1:8080", "", "", loop, false},
	}
	for _, c := range cases {
		if got := NewHostGuard(c.addr, c.public).Allowed(c.host, c.local); got != c.want {
			t.Errorf("addr %s public %q: Host %q on %v = %v, want %v", c.addr, c.public, c.host, c.local, got, c.want)
		}
	}
}
