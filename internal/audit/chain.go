// Package audit is Gatehouse's audit trail: the hash chain over every decision, its
// export (JSON Lines or CSV, streamed) and its verification.
//
// Every decided prompt — by a person, by a timeout, by abandonment — gets one row in
// the chain, appended by the same statement (Postgres) or transaction (SQLite) that
// decides it, in commit order: the chain's head row is locked by that statement until
// it commits, so deciders on every replica form one line. Each row's hash is
//
//	SHA-256( Decision bytes
//	       ‖ SHA-256(origin) ‖ SHA-256(params) ‖ SHA-256(content)
//	       ‖ previous row's hash (32 bytes; zeros for the first row) )
//
// where the decision bytes are the tag "gatehouse-audit-v1" followed by, each as a
// 4-byte big-endian length and its UTF-8 bytes: the prompt id, its session id, status,
// action, resolved_by, resolved_via, resolved_at (UTC, RFC 3339 with exactly six
// fractional digits) and the deciding rule's id (empty when a person or the clock
// decided). A missing action or content hashes as the empty string. params
// and content are hashed as the database returns them as text (Postgres returns JSONB
// normalized, the same every time).
//
// The package imports no store: the store computes hashes with Link when it appends,
// and Verify and Export read through the small interfaces declared here.
package audit

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"time"
)

// Tag starts every hashed record; a new encoding would get a new tag.
const Tag = "gatehouse-audit-v1"

// Genesis is the prev_hash of the first row of a chain.
const Genesis = "0000000000000000000000000000000000000000000000000000000000000000"

// TimeLayout is how resolved_at enters the hash. Both databases store microseconds,
// so the store truncates decision times to microseconds before writing them.
const TimeLayout = "2006-01-02T15:04:05.000000Z07:00"

// Decision is what a decision writes, as it enters the hash.
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

// Bytes is the canonical encoding of d (see the package comment).
func (d Decision) Bytes() []byte {
	at := d.ResolvedAt.UTC().Truncate(time.Microsecond).Format(TimeLayout)
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

// Record is one chain row with the prompt it covers, as stored.
type Record struct {
	Seq      int64
	PrevHash string
	Hash     string
	Decision
	Origin    string
	Params    []byte
	Content   []byte
	CreatedAt time.Time
	// Missing is set when the chain row names a prompt that does not exist.
	Missing bool
}

// Link is the hash of a chain row: d's decision bytes, the digests of the prompt's
// origin, params and content, and the previous row's hash (hex).
func Link(d Decision, origin string, params, content []byte, prevHex string) string {
	return LinkBytes(d.Bytes(), origin, params, content, prevHex)
}

// LinkBytes is Link over already encoded decision bytes.
func LinkBytes(decision []byte, origin string, params, content []byte, prevHex string) string {
	prev, err := hex.DecodeString(prevHex)
	if err != nil || len(prev) != sha256.Size {
		// A malformed previous hash cannot link to anything; hashing its text keeps
		// the result defined (and different from any well-formed link).
		prev = []byte(prevHex)
	}
	h := sha256.New()
	h.Write(decision)
	for _, part := range [][]byte{[]byte(origin), params, content} {
		sum := sha256.Sum256(part)
		h.Write(sum[:])
	}
	h.Write(prev)
	return hex.EncodeToString(h.Sum(nil))
}

// Expected recomputes r's hash from its fields and prev (the previous row's stored hash).
func (r *Record) Expected(prev string) string {
	return Link(r.Decision, r.Origin, r.Params, r.Content, prev)
}
