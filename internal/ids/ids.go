// Package ids mints the prefixed, 128-bit random identifiers Gatehouse hands out and
// checks their shape. Random ids are unguessable by design: knowing one prompt's id
// must not let anyone guess another's.
package ids

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"time"
)

// Prefixes of the id kinds.
const (
	AgentPrefix       = "agent_"
	SessionPrefix     = "conv_"
	ElicitationPrefix = "elicit_"
	// PushSubscriptionPrefix names a browser subscribed to Web Push.
	PushSubscriptionPrefix = "psub_"
)

// NewOrdered returns prefix + 32 lower-case hex characters: the time in milliseconds
// (12), then crypto randomness (20, 80 bits). Ids made later sort after earlier ones,
// so an index on them grows at its end: a prompt's id is its table's key, and a batch
// of random keys wrote a different index page for almost every row it stored.
func NewOrdered(prefix string) string {
	var b [16]byte
	ms := uint64(time.Now().UnixMilli())
	for i := 5; i >= 0; i-- {
		b[i] = byte(ms)
		ms >>= 8
	}
	if _, err := rand.Read(b[6:]); err != nil {
		panic("crypto/rand failed: " + err.Error())
	}
	return prefix + hex.EncodeToString(b[:])
}

// New returns prefix + 32 lower-case hex characters of crypto randomness.
func New(prefix string) string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("crypto/rand failed: " + err.Error()) // the platform is broken; nothing sane to do
	}
	return prefix + hex.EncodeToString(b[:])
}

// Deterministic returns prefix + the first 32 hex characters of sha256(data).
func Deterministic(prefix string, data []byte) string {
	sum := sha256.Sum256(data)
	return prefix + hex.EncodeToString(sum[:])[:32]
}

var (
	sessionRe     = regexp.MustCompile(`^conv_[0-9a-f]{32}$`)
	agentRe       = regexp.MustCompile(`^agent_[0-9a-f]{32}$`)
	elicitationRe = regexp.MustCompile(`^elicit_(?:[a-z]+_)?[0-9a-f]{32}$`)
	reattachRe    = regexp.MustCompile(`^elicit_[a-z]+_[0-9a-f]{32}$`)
)

// ValidSession reports whether s has the shape of a session id.
func ValidSession(s string) bool { return sessionRe.MatchString(s) }

// ValidAgent reports whether s has the shape of an agent id.
func ValidAgent(s string) bool { return agentRe.MatchString(s) }

// ValidElicitation reports whether s has the shape of an elicitation id.
func ValidElicitation(s string) bool { return elicitationRe.MatchString(s) }

// ValidReattach reports whether s may be supplied by a client to re-attach to a prompt
// (`elicit_<origin>_<32 hex>`).
func ValidReattach(s string) bool { return reattachRe.MatchString(s) }
