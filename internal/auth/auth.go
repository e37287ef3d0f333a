// Package auth decides who is calling and what they may do.
//
// Identity comes from a header set by a trusted reverse proxy (or is the single user
// "local" when auth is off). Access levels live on top-level sessions only: a sub-agent
// session has no grants of its own, so access to it is access to its root.
package auth

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strings"

	"github.com/gatehouse-dev/gatehouse/internal/errs"
)

// Level is an access level; each covers those below it.
type Level int

// Access levels.
const (
	None   Level = 0
	Read   Level = 1
	Edit   Level = 2
	Manage Level = 3
	Owner  Level = 4
)

// String names the level as the API spells it.
// CanPark reports whether a caller holding l may park a request for a person to
// decide: only editors. A reader may watch, but may not have someone decide on their
// behalf — their hooks get the "no verdict" answer and their evaluations the ASK back.
func (l Level) CanPark() bool { return l >= Edit }

func (l Level) String() string {
	switch l {
	case Read:
		return "read"
	case Edit:
		return "edit"
	case Manage:
		return "manage"
	case Owner:
		return "owner"
	}
	return "none"
}

// ParseLevel reads an API level name.
func ParseLevel(s string) (Level, error) {
	switch s {
	case "read":
		return Read, nil
	case "edit":
		return Edit, nil
	case "manage":
		return Manage, nil
	case "owner":
		return Owner, nil
	}
	return None, fmt.Errorf("unknown level %q (want read, edit, manage or owner)", s)
}

// LocalUser is the identity of every request when auth is off.
const LocalUser = "local"

// PublicUser is the grant holder that stands for everyone signed in.
const PublicUser = "__public__"

// Mode is the authentication mode.
type Mode string

// Modes.
const (
	ModeNone   Mode = "none"
	ModeHeader Mode = "header"
	// ModeOIDC signs people in with an OpenID Connect provider (a browser cookie);
	// API callers use tokens.
	ModeOIDC Mode = "oidc"
)

// PerPerson reports whether the mode tells people apart, so grants apply; with auth
// off everyone is the single user who owns everything.
func (m Mode) PerPerson() bool { return m == ModeHeader || m == ModeOIDC }

// Identifier turns a request's peer address and header into a user. In ModeOIDC the
// identity is the signed-in person of the browser cookie, which the handlers read.
type Identifier struct {
	Mode    Mode
	Header  string
	trusted []netip.Prefix
}

// NewIdentifier parses the trusted proxy CIDRs.
func NewIdentifier(mode Mode, header string, trustedCIDRs []string) (*Identifier, error) {
	id := &Identifier{Mode: mode, Header: header}
	for _, c := range trustedCIDRs {
		c = strings.TrimSpace(c)
		if c == "" {
			continue
		}
		p, err := netip.ParsePrefix(c)
		if err != nil {
			return nil, fmt.Errorf("trusted proxy %q: %w", c, err)
		}
		id.trusted = append(id.trusted, p.Masked())
	}
	return id, nil
}

// Trusted reports whether remoteAddr ("host:port" as net/http gives it) is a trusted proxy.
func (i *Identifier) Trusted(remoteAddr string) bool {
	host, _, err := net.SplitHostPort(remoteAddr)
	if err != nil {
		host = remoteAddr
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return false
	}
	a = a.Unmap()
	for _, p := range i.trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// Identify returns the caller's identity from every value of the identity header
// (nil when absent). The header is honoured only from a trusted peer: an untrusted peer
// that sends it is refused outright rather than silently ignored, so a misconfigured
// proxy is noticed. More than one value — two header lines, or a comma list, which is
// the same thing to HTTP — is refused too: it means a proxy appended its identity to one
// the client sent instead of replacing it, and picking either would let the client
// choose who it is.
func (i *Identifier) Identify(remoteAddr string, values []string) (string, error) {
	if i.Mode == ModeOIDC {
		return "", errs.Unauthorized("sign in first") // the handlers read the signed-in person
	}
	if i.Mode != ModeHeader {
		return LocalUser, nil
	}
	if values != nil && !i.Trusted(remoteAddr) {
		return "", errs.Unauthorized("identity header from an untrusted peer")
	}
	if len(values) > 1 || (len(values) == 1 && strings.Contains(values[0], ",")) {
		return "", errs.Unauthorized("the identity header %s must appear once with one identity", i.Header)
	}
	headerValue := ""
	if len(values) == 1 {
		headerValue = values[0]
	}
	user := strings.ToLower(strings.TrimSpace(headerValue))
	if user == "" {
		return "", errs.Unauthorized("sign in through your proxy")
	}
	if user == LocalUser || user == PublicUser {
		return "", errs.Unauthorized("%q is not a valid identity", user)
	}
	return user, nil
}

// TokenUser is the identity a valid personal API token acts as: its owner, except
// with auth off, where everyone is LocalUser. An owner that is no valid identity in
// this mode (a token made as "local" before the server moved to --auth header) is
// refused like a bad token, with msg.
func (i *Identifier) TokenUser(owner, msg string) (string, error) {
	if i.Mode == ModeNone {
		return LocalUser, nil
	}
	if owner == "" || owner == LocalUser || owner == PublicUser {
		return "", errs.Unauthorized("%s", msg)
	}
	return owner, nil
}

// BearerToken returns the token of an "Authorization: Bearer <token>" header. present
// is false when no Authorization header uses the Bearer scheme (another scheme, say a
// proxy's Basic credentials, is not ours to judge). A Bearer header with no token, or
// more than one Authorization header, is present with an empty token: a bad token.
func BearerToken(values []string) (token string, present bool) {
	bearer := false
	for _, v := range values {
		scheme, _, _ := strings.Cut(strings.TrimSpace(v), " ")
		if strings.EqualFold(scheme, "bearer") {
			bearer = true
		}
	}
	if !bearer {
		return "", false
	}
	if len(values) != 1 {
		return "", true
	}
	_, tok, _ := strings.Cut(strings.TrimSpace(values[0]), " ")
	return strings.TrimSpace(tok), true
}

// GrantStore is what access checks read.
type GrantStore interface {
	GrantLevel(ctx context.Context, rootID, user string) (int, error)
}

// Checker computes a user's level on a session tree.
type Checker struct {
	Mode   Mode
	Grants GrantStore
	// Admins (--admins) hold at least manage on every session tree and see every
	// session, agent, rule and audit row.
	Admins map[string]bool
}

// NewAdmins is the set of --admins identities, trimmed and lower-cased as identities are.
func NewAdmins(list []string) map[string]bool {
	m := map[string]bool{}
	for _, a := range list {
		if a = strings.ToLower(strings.TrimSpace(a)); a != "" {
			m[a] = true
		}
	}
	return m
}

// IsAdmin reports whether user is one of --admins (only where people are told apart).
func (c *Checker) IsAdmin(user string) bool { return c.Mode.PerPerson() && c.Admins[user] }

// SeesAll reports whether user sees everything: auth is off, or user is an admin.
func (c *Checker) SeesAll(user string) bool { return !c.Mode.PerPerson() || c.IsAdmin(user) }

// LevelOn returns user's level on the tree rooted at rootID.
func (c *Checker) LevelOn(ctx context.Context, rootID, user string) (Level, error) {
	if !c.Mode.PerPerson() {
		return Owner, nil
	}
	n, err := c.Grants.GrantLevel(ctx, rootID, user)
	if err != nil {
		return None, err
	}
	if c.IsAdmin(user) && Level(n) < Manage {
		return Manage, nil
	}
	return Level(n), nil
}

// Require checks that user holds at least need on the tree rooted at rootID. No access
// at all is reported as not found, so the existence of a session does not leak; some
// access below need is forbidden.
func (c *Checker) Require(ctx context.Context, rootID, user string, need Level) (Level, error) {
	have, err := c.LevelOn(ctx, rootID, user)
	if err != nil {
		return None, err
	}
	if have == None {
		return None, errs.NotFound("session not found")
	}
	if have < need {
		return have, errs.Forbidden("this needs %s access to the session", need)
	}
	return have, nil
}
