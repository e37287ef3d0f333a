package auth

import "testing"

// TestBearerToken: only the Bearer scheme carries a token; an empty one or two headers
// are a bad token (present, empty), never ignored.
func TestBearerToken(t *testing.T) {
	for _, tc := range []struct {
		in      []string
		tok     string
		present bool
	}{
		{nil, "", false},
		{[]string{"Basic dXNlcjpwYXNz"}, "", false},
		{[]string{"Bearer ght_abc"}, "ght_abc", true},
		{[]string{"bearer   ght_abc  "}, "ght_abc", true},
		{[]string{"Bearer"}, "", true},
		{[]string{"Bearer ght_a", "Bearer ght_b"}, "", true},
		{[]string{"Basic x", "Bearer ght_b"}, "", true},
	} {
		tok, present := BearerToken(tc.in)
		if tok != tc.tok || present != tc.present {
			t.Errorf("BearerToken(%q) = %q, %v; want %q, %v", tc.in, tok, present, tc.tok, tc.present)
		}
	}
}

// TestTokenUser: with auth off a token acts as LocalUser; otherwise as its owner, and an
// owner that is no identity in header mode is refused.
func TestTokenUser(t *testing.T) {
	none, _ := NewIdentifier(ModeNone, "", nil)
	if u, err := none.TokenUser("alice@example.com", "bad"); u != LocalUser || err != nil {
		t.Fatalf("none: %q %v", u, err)
	}
	hdr, _ := NewIdentifier(ModeHeader, "X-Forwarded-Email", nil)
	if u, err := hdr.TokenUser("alice@example.com", "bad"); u != "alice@example.com" || err != nil {
		t.Fatalf("header: %q %v", u, err)
	}
	for _, owner := range []string{"", LocalUser, PublicUser} {
		if _, err := hdr.TokenUser(owner, "bad"); err == nil || err.Error() != "bad" {
			t.Fatalf("header, owner %q: %v", owner, err)
		}
	}
}
