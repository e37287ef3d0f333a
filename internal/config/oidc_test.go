package config

import (
	"io"
	"slices"
	"strings"
	"testing"
)

// TestOIDCSettings: --auth oidc needs its provider, client, public URL and someone
// allowed; the settings have environment twins; --admins is a trimmed, lower-cased list.
func TestOIDCSettings(t *testing.T) {
	ok := []string{"--auth", "oidc", "--oidc-issuer", "https://id.example.com/", "--oidc-client-id", "gh",
		"--public-url", "https://gatehouse.example.com", "--oidc-allowed-domains", "example.com, example.org"}
	c, err := Load("test", ok, env(map[string]string{"GATEHOUSE_OIDC_CLIENT_SECRET": "s3cret",
		"GATEHOUSE_OIDC_ALLOWED_EMAILS": "a@x.io", "GATEHOUSE_ADMINS": " Carol@Example.com ,dave@example.com"}), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.OIDCIssuer != "https://id.example.com/" || c.OIDCClientSecret != "s3cret" || !slices.Equal(c.OIDCAllowedDomains, []string{"example.com", "example.org"}) ||
		!slices.Equal(c.OIDCAllowedEmails, []string{"a@x.io"}) || !slices.Equal(c.Admins, []string{"carol@example.com", "dave@example.com"}) {
		t.Fatalf("%+v", c)
	}
	without := func(flag string) []string {
		i := slices.Index(ok, flag)
		return append(slices.Clone(ok[:i]), ok[i+2:]...)
	}
	for _, tc := range []struct {
		args []string
		says string
	}{
		{without("--oidc-issuer"), "--oidc-issuer"},
		{without("--oidc-client-id"), "--oidc-client-id"},
		{without("--public-url"), "--public-url"},
		{without("--oidc-allowed-domains"), "--oidc-allowed-domains"},
		{append(without("--oidc-issuer"), "--oidc-issuer", "id.example.com"), "issuer URL"},
	} {
		if _, err := Load("test", tc.args, env(nil), io.Discard); err == nil || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%v: err %v, want it to mention %s", tc.args, err, tc.says)
		}
	}
}
