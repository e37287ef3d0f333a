// Package audit is Gatehouse's audit trail: the hash chain over every decision, its
// export (JSON Lines or CSV, streamed), its verification, and the signed daily
// checkpoints of its head that let a verifier outside the database detect a chain that
// was cut short or rewritten.
//
// Every decided prompt — by a person, by a timeout, by abandonment — gets one row in
// the chain, appended by the same statement (Postgres) or transaction (SQLite) that
// decides it, in commit order: the chain's head row is locked by that statement until
// it commits, so deciders on every replica form one line.
//
// Each chain row names the encoding (version) that hashed it. Version 2, what every
// new row uses, covers every column of the decision record:
//
//	SHA-256( "gatehouse-audit-v2"
//	       ‖ for each of id, session_id, origin, params, status, action, content,
//	             resolved_by, resolved_via, resolved_at, rule_id, call_key,
//	             created_at, expires_at, and the row's kind ("live" or "backfill"):
//	             0x00 when NULL, else 0x01 ‖ SHA-256(its text)
//	       ‖ previous row's hash (32 bytes; zeros for the first row) )
//
// where times are UTC, RFC 3339 with exactly six fractional digits (TimeLayout), and
// params and content are the JSON text the database returns (Postgres returns JSONB
// normalized, the same every time). The hash is computed from the row as stored (the
// deciding statement's RETURNING), so what is hashed is what a verifier reads back.
//
// Version 1 (rows chained by earlier releases; they still verify with it) hashed the
// tag "gatehouse-audit-v1" followed by, each as a 4-byte big-endian length and its
// UTF-8 bytes: id, session id, status, action, resolved_by, resolved_via, resolved_at
// and the deciding rule's id; then SHA-256(origin) ‖ SHA-256(params) ‖
// SHA-256(content) ‖ the previous hash. It left created_at, expires_at and call_key out.
//
// The package imports no store: the store computes hashes with Record.Link when it
// appends, and Verify, Export and Checkpointer read through small interfaces declared
// here.
package audit

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"hash"
	"time"
)

// Chain row versions: the encoding a row was hashed with.
const (
	// V1 is the first encoding (see the package comment); rows it chained still verify.
	V1 = 1
	// V2 hashes every column of the decision record and the backfill mark.
	V2 = 2
	// Current is what new rows use.
	Current = V2
)

// Tag starts every version 1 record.
const Tag = "gatehouse-audit-v1"

// TagV2 starts every version 2 record.
const TagV2 = "gatehouse-audit-v2"

// Kinds of a version 2 row, as hashed.
const (
	KindLive     = "live"
	KindBackfill = "backfill"
)

// Genesis is the prev_hash of the first row of a chain.
const Genesis = "0000000000000000000000000000000000000000000000000000000000000000"

// TimeLayout is how times enter the hash. Both databases store microseconds, so the
// store truncates decision times to microseconds before writing them.
const TimeLayout = "2006-01-02T15:04:05.000000Z07:00"

// FormatTime is t as it enters the hash.
func FormatTime(t time.Time) string {
	return t.UTC().Truncate(time.Microsecond).Format(TimeLayout)
}

// Decision is what a version 1 row hashed of the decision.
type Decision struct {
	ElicitationID string
	SessionID     string
	Status        string
	Action        string
	ResolvedBy    string
	ResolvedVia   string
	ResolvedAt    time.Time
	// RuleID names the Gatehouse rule that decided (resolved_via "rule"); empty otherwise.
	RuleID string
}

// Bytes is the canonical version 1 encoding of d (see the package comment).
func (d Decision) Bytes() []byte {
	at := FormatTime(d.ResolvedAt)
	fields := [...]string{d.ElicitationID, d.SessionID, d.Status, d.Action, d.ResolvedBy, d.ResolvedVia, at, d.RuleID}
	n := len(Tag)
	for _, f := range fields {
		n += 4 + len(f)
	}
	b := make([]byte, 0, n)
	b = append(b, Tag...)
	for _, f := range fields {
		b = binary.BigEndian.AppendUint32(b, uint32(len(f)))
		b = append(b, f...)
	}
	return b
}

// Entry is one decided prompt as stored: every column of the decision record. The
// pointer fields are the nullable columns (nil is NULL). Columns that change after the
// decision as the server goes about its work (consumed_at when an approval is spent,
// lease_until, and the logged/notified/chained progress marks) are not part of it.
type Entry struct {
	ElicitationID string
	SessionID     string
	Origin        string
	Params        []byte
	Status        string
	Action        *string
	// Content is nil when NULL.
	Content     []byte
	ResolvedBy  *string
	ResolvedVia *string
	ResolvedAt  *time.Time
	RuleID      *string
	CallKey     *string
	CreatedAt   time.Time
	ExpiresAt   time.Time
}

// Record is one chain row with the prompt it covers, as stored.
type Record struct {
	Seq      int64
	PrevHash string
	Hash     string
	// Version is the encoding that hashed the row (V1, V2).
	Version int
	// Backfilled marks a row chained after the fact, for a prompt decided before the
	// chain began (see store.ChainUnchained).
	Backfilled bool
	Entry
	// Missing is set when the chain row names a prompt that does not exist.
	Missing bool
}

// Link is the version 1 hash of a chain row: d's decision bytes, the digests of the
// prompt's origin, params and content, and the previous row's hash (hex).
func Link(d Decision, origin string, params, content []byte, prevHex string) string {
	return LinkBytes(d.Bytes(), origin, params, content, prevHex)
}

// LinkBytes is Link over already encoded decision bytes.
func LinkBytes(decision []byte, origin string, params, content []byte, prevHex string) string {
	h := sha256.New()
	h.Write(decision)
	for _, part := range [][]byte{[]byte(origin), params, content} {
		sum := sha256.Sum256(part)
		h.Write(sum[:])
	}
	writePrev(h, prevHex)
	return hex.EncodeToString(h.Sum(nil))
}

// writePrev writes the previous row's hash as its 32 bytes. A malformed previous hash
// cannot link to anything; hashing its text keeps the result defined (and different
// from any well-formed link).
func writePrev(h hash.Hash, prevHex string) {
	prev, err := hex.DecodeString(prevHex)
	if err != nil || len(prev) != sha256.Size {
		prev = []byte(prevHex)
	}
	h.Write(prev)
}

// LinkV2 is the version 2 hash of e chained after prevHex (see the package comment);
// backfilled is the row's kind.
func LinkV2(e *Entry, backfilled bool, prevHex string) string {
	h := sha256.New()
	h.Write([]byte(TagV2))
	// Each field is hashed from its own bytes: the params (a prompt's largest field,
	// hashed for every decision) are not copied into a string and back.
	raw := func(b []byte, ok bool) {
		if !ok {
			h.Write([]byte{0})
			return
		}
		sum := sha256.Sum256(b)
		h.Write([]byte{1})
		h.Write(sum[:])
	}
	field := func(s string, ok bool) { raw([]byte(s), ok) }
	opt := func(p *string) {
		if p == nil {
			field("", false)
		} else {
			field(*p, true)
		}
	}
	field(e.ElicitationID, true)
	field(e.SessionID, true)
	field(e.Origin, true)
	raw(e.Params, true)
	field(e.Status, true)
	opt(e.Action)
	raw(e.Content, e.Content != nil)
	opt(e.ResolvedBy)
	opt(e.ResolvedVia)
	if e.ResolvedAt != nil {
		field(FormatTime(*e.ResolvedAt), true)
	} else {
		field("", false)
	}
	opt(e.RuleID)
	opt(e.CallKey)
	field(FormatTime(e.CreatedAt), true)
	field(FormatTime(e.ExpiresAt), true)
	kind := KindLive
	if backfilled {
		kind = KindBackfill
	}
	field(kind, true)
	writePrev(h, prevHex)
	return hex.EncodeToString(h.Sum(nil))
}

// v1Decision is what a version 1 row hashed of r, with ruleID as the rule.
func (r *Record) v1Decision(ruleID string) Decision {
	d := Decision{ElicitationID: r.ElicitationID, SessionID: r.SessionID, Status: r.Status,
		Action: deref(r.Action), ResolvedBy: deref(r.ResolvedBy), ResolvedVia: deref(r.ResolvedVia), RuleID: ruleID}
	if r.ResolvedAt != nil {
		d.ResolvedAt = *r.ResolvedAt
	}
	return d
}

// Matches reports whether r's stored hash is what its version's encoding gives for
// its fields after prev (the previous row's stored hash). An unknown version never
// matches.
func (r *Record) Matches(prev string) bool {
	switch r.Version {
	case V2:
		return LinkV2(&r.Entry, r.Backfilled, prev) == r.Hash
	case V1:
		if Link(r.v1Decision(deref(r.RuleID)), r.Origin, r.Params, r.Content, prev) == r.Hash {
			return true
		}
		// Version 1's deciding statement hashed the rule of the decision, not the
		// column: a prompt whose wait an ask rule set (rule_id written when it was
		// parked) and that a person then decided was hashed with no rule.
		return r.RuleID != nil && deref(r.ResolvedVia) != "rule" &&
			Link(r.v1Decision(""), r.Origin, r.Params, r.Content, prev) == r.Hash
	}
	return false
}

// Expected is r's hash recomputed with its version's encoding after prev ("" for an
// unknown version).
func (r *Record) Expected(prev string) string {
	switch r.Version {
	case V2:
		return LinkV2(&r.Entry, r.Backfilled, prev)
	case V1:
		return Link(r.v1Decision(deref(r.RuleID)), r.Origin, r.Params, r.Content, prev)
	}
	return ""
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
