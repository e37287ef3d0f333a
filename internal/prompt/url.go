package prompt

import (
	"net"
	"net/url"
	"strings"

	"golang.org/x/net/idna"
)

// describeURL fills a URL-mode prompt's target. Only http(s) URLs with a host are
// linked. The host is shown in the ASCII form the browser will resolve: an
// internationalised name is shown as punycode (xn--…) with its Unicode form beside
// it, so a homograph such as "gіthub.com" (Cyrillic і) cannot pass for the real one.
func (p *Prompt) describeURL(raw string) {
	p.URL = raw
	u, err := url.Parse(raw)
	if err != nil {
		return
	}
	host, port := u.Hostname(), u.Port()
	ascii := asciiHost(host)
	if !strings.EqualFold(ascii, host) {
		p.URLHostUnicode = host
		u.Host = ascii
		if port != "" {
			u.Host = net.JoinHostPort(ascii, port)
		}
		p.URL = u.String()
	}
	p.URLHost = u.Host
	p.URLSafe = (u.Scheme == "https" || u.Scheme == "http") && u.Host != ""
}

// asciiHost converts a host name to its ASCII (punycode) form: by the rules browsers
// use for lookup, or, for a name those rules reject, label by label, so a
// non-ASCII name is never shown as Unicode alone.
func asciiHost(host string) string {
	if host == "" || net.ParseIP(host) != nil {
		return host
	}
	if a, err := idna.Lookup.ToASCII(host); err == nil {
		return a
	}
	if a, err := idna.Punycode.ToASCII(host); err == nil {
		return a
	}
	return host
}
