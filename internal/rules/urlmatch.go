package rules

import (
	"fmt"
	"net"
	"net/url"
	"path"
	"strings"
)

// canonicalURL parses a fetched URL into the form rules compare: lower-case scheme and
// host, an explicit port only when it is not the scheme's default, a path that starts
// with "/", the query kept, the fragment dropped. URLs that could mean two things to two
// parsers — user info ("https://docs.example.com@evil.example/"), a scheme other than
// http(s), no host, backslashes, control characters — have no canonical form, and no
// allow rule matches them.
func canonicalURL(raw string) (*url.URL, bool) {
	if raw == "" || len(raw) > 8192 || strings.ContainsAny(raw, "\\ \t\r\n") {
		return nil, false
	}
	for _, r := range raw {
		if r < 0x20 || r == 0x7f {
			return nil, false
		}
	}
	u, err := url.Parse(raw)
	if err != nil || u.User != nil || u.Opaque != "" {
		return nil, false
	}
	u.Scheme = strings.ToLower(u.Scheme)
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, false
	}
	host, port := strings.ToLower(u.Hostname()), u.Port()
	if host == "" || strings.ContainsAny(host, "*%") {
		return nil, false
	}
	host = strings.TrimSuffix(host, ".")
	if (u.Scheme == "http" && port == "80") || (u.Scheme == "https" && port == "443") {
		port = ""
	}
	u.Host = host
	if port != "" {
		u.Host = net.JoinHostPort(host, port)
	}
	// Dot segments are resolved as the server will resolve them, so "/api/../admin"
	// is compared as "/admin".
	clean := path.Clean("/" + u.Path)
	if strings.HasSuffix(u.Path, "/") && clean != "/" {
		clean += "/"
	}
	u.Path = clean
	u.RawPath = ""
	u.Fragment, u.RawFragment = "", ""
	return u, true
}

// urlPrefix is a prefix rule for a URL: a scheme, a host (exactly, or any subdomain of
// it when written "*.example.com"), a port and a path prefix that ends at a segment
// boundary — so "https://docs.example.com" never matches
// "https://docs.example.com.evil.example/x", and "/api" matches "/api" and "/api/v1"
// but not "/apikeys".
type urlPrefix struct {
	scheme, host, port, path string
	anySubdomain             bool
}

// compileURLPrefix reads a prefix pattern such as "https://docs.example.com/api" or
// "https://*.example.com".
func compileURLPrefix(pattern string) (*urlPrefix, error) {
	wild := false
	p := pattern
	if i := strings.Index(p, "://*."); i >= 0 {
		wild = true
		p = p[:i+3] + p[i+5:]
	}
	u, ok := canonicalURL(p)
	if !ok {
		return nil, fmt.Errorf("is not an http(s) URL with a host, such as https://docs.example.com/path or https://*.example.com")
	}
	if u.RawQuery != "" {
		return nil, fmt.Errorf("a URL prefix has no query (it matches every query under its path)")
	}
	return &urlPrefix{scheme: u.Scheme, host: u.Hostname(), port: u.Port(), path: strings.TrimSuffix(u.Path, "/"),
		anySubdomain: wild}, nil
}

func (p *urlPrefix) match(u *url.URL) bool {
	if u.Scheme != p.scheme || u.Port() != p.port {
		return false
	}
	host := u.Hostname()
	if p.anySubdomain {
		if !strings.HasSuffix(host, "."+p.host) {
			return false
		}
	} else if host != p.host {
		return false
	}
	return p.path == "" || u.Path == p.path || strings.HasPrefix(u.Path, p.path+"/")
}
