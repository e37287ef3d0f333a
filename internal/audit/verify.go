package audit

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// ChainReader is what Verify reads.
type ChainReader interface {
	// ChainPage returns up to limit chain rows after seq after, in order.
	ChainPage(ctx context.Context, after int64, limit int) ([]Record, error)
	// AuditHead returns the head row: the last seq and hash appended.
	AuditHead(ctx context.Context) (int64, string, error)
	// UnchainedDecided lists decided prompts without a chain row.
	UnchainedDecided(ctx context.Context, limit int) ([]string, error)
}

// pageSize is how many rows Verify and Export read per query: memory stays bounded
// however long the chain is, and no statement runs long.
const pageSize = 1000

// Problem is the first place the chain does not hold.
type Problem struct {
	// Seq is the chain row (0 when the problem is not a chain row).
	Seq           int64
	ElicitationID string
	Reason        string
}

func (p *Problem) Error() string {
	switch {
	case p.Seq == 0 && p.ElicitationID == "":
		return p.Reason
	case p.Seq == 0:
		return fmt.Sprintf("elicitation %s: %s", p.ElicitationID, p.Reason)
	case p.ElicitationID == "":
		return fmt.Sprintf("seq=%d: %s", p.Seq, p.Reason)
	}
	return fmt.Sprintf("row seq=%d elicitation %s: %s", p.Seq, p.ElicitationID, p.Reason)
}

// Result is what Verify found.
type Result struct {
	// Rows is how many chain rows were checked.
	Rows int64
	// Backfilled is how many of them were chained after the fact (decided before the
	// chain began).
	Backfilled int64
	// HeadSeq and HeadHash are the chain's head as stored (record them somewhere else,
	// or keep the signed daily checkpoints, to detect a cut or rewritten chain later).
	HeadSeq  int64
	HeadHash string
	// Problem is the first row that does not match; nil when the chain holds.
	Problem *Problem
}

// Anchor is a point the chain must still reach: a head recorded earlier outside the
// database (`--head`) or a signed checkpoint. A chain that was cut short (its last
// rows deleted, the head rewound) or rewritten from some row on no longer reaches it.
type Anchor struct {
	// Seq is the row that must carry Hash; 0 means "whichever row" (a bare hash), or
	// the empty chain when Hash is Genesis.
	Seq  int64
	Hash string
	// Name says where the anchor came from, for the report ("--head", "checkpoint
	// 2026-03-01 (line 3)").
	Name string
}

// ParseHead reads a --head value: HASH or SEQ:HASH, the hash as 64 hex digits.
func ParseHead(v string) (Anchor, error) {
	a := Anchor{Name: "--head " + v}
	hash := v
	if seq, h, ok := strings.Cut(v, ":"); ok {
		n, err := strconv.ParseInt(seq, 10, 64)
		if err != nil || n < 0 {
			return a, fmt.Errorf("--head %q: SEQ must be a number ≥ 0", v)
		}
		a.Seq, hash = n, h
	}
	hash = strings.ToLower(hash)
	if !isHash(hash) {
		return a, fmt.Errorf("--head %q: HASH must be 64 hex digits (the hash `audit verify` prints)", v)
	}
	if a.Seq == 0 && strings.Contains(v, ":") && hash != Genesis {
		return a, fmt.Errorf("--head %q: seq 0 is the empty chain, whose hash is %s", v, Genesis)
	}
	a.Hash = hash
	return a, nil
}

func isHash(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, c := range s {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// orderKey is where a decision sorts in the backfill's order (decided time, then id).
type orderKey struct {
	at time.Time
	id string
}

func keyOf(r *Record) orderKey {
	k := orderKey{id: r.ElicitationID}
	if r.ResolvedAt != nil {
		k.at = r.ResolvedAt.UTC().Truncate(time.Microsecond)
	}
	return k
}

// Before reports whether a was decided before b in the backfill's order: by decided
// time (microseconds; undated first), then by id, byte by byte.
func Before(a, b *Record) bool { return keyOf(a).before(keyOf(b)) }

func (k orderKey) before(o orderKey) bool {
	if !k.at.Equal(o.at) {
		return k.at.Before(o.at)
	}
	return k.id < o.id
}

// Verify walks the whole chain in order, recomputing each row's hash (with the
// encoding of the row's version) from the stored prompt and the previous row's stored
// hash, and stops at the first row that does not match: a changed column of the
// decision record, a changed, missing or reordered row, a prompt whose chain row is
// gone, or a row marked backfilled that was decided after the chain began. Then it
// checks that the head names the last row, that the chain still reaches every anchor
// (a head or checkpoint kept outside the database: a chain cut short or rewritten
// does not), and that no decided prompt is missing from the chain. It reads the chain
// a page at a time (constant memory).
func Verify(ctx context.Context, r ChainReader, anchors ...Anchor) (Result, error) {
	var res Result
	headSeq, headHash, err := r.AuditHead(ctx)
	if err != nil {
		return res, err
	}
	res.HeadSeq, res.HeadHash = headSeq, headHash
	bySeq := map[int64][]Anchor{}
	byHash := map[string]bool{}
	for _, a := range anchors {
		if a.Seq == 0 {
			byHash[a.Hash] = a.Hash == Genesis
		} else {
			bySeq[a.Seq] = append(bySeq[a.Seq], a)
		}
	}
	prev, last := Genesis, int64(0)
	var first, prevKey orderKey
	onlyBackfilled := true // every row so far was backfilled (the first start-up's run)
	for {
		page, err := r.ChainPage(ctx, last, pageSize)
		if err != nil {
			return res, err
		}
		for i := range page {
			row := &page[i]
			res.Rows++
			bad := func(format string, args ...any) (Result, error) {
				res.Problem = &Problem{Seq: row.Seq, ElicitationID: row.ElicitationID, Reason: fmt.Sprintf(format, args...)}
				return res, nil
			}
			switch {
			case row.Seq != last+1:
				return bad("sequence jumps from %d to %d (rows missing)", last, row.Seq)
			case row.Missing:
				return bad("the decided prompt is missing from the elicitations table")
			case row.PrevHash != prev:
				return bad("prev_hash %s does not match the previous row's hash %s", row.PrevHash, prev)
			case row.Status == "pending":
				return bad("the prompt is pending again")
			case row.Version != V1 && row.Version != V2:
				return bad("unknown chain version %d", row.Version)
			}
			if !row.Matches(prev) {
				return bad("stored hash %s, recomputed %s (version %d): the row or its prompt was changed", row.Hash, row.Expected(prev), row.Version)
			}
			key := keyOf(row)
			if row.Seq == 1 {
				first = key
			}
			if row.Backfilled {
				res.Backfilled++
				// The backfill chains only prompts decided before the chain began: in
				// one run on a chain that was empty, in order, or before its first row.
				inFirstRun := onlyBackfilled && (row.Seq == 1 || prevKey.before(key))
				if !inFirstRun && !key.before(first) {
					return bad("marked backfilled, but decided after the chain began (its first row was decided %s)", first.at.Format(TimeLayout))
				}
			} else {
				onlyBackfilled = false
			}
			for _, a := range bySeq[row.Seq] {
				if a.Hash != row.Hash {
					return bad("%s says this row's hash is %s, the chain has %s: the chain was rewritten from here on", a.Name, a.Hash, row.Hash)
				}
			}
			if _, ok := byHash[row.Hash]; ok {
				byHash[row.Hash] = true
			}
			prev, last, prevKey = row.Hash, row.Seq, key
		}
		if len(page) < pageSize {
			break
		}
	}
	if headSeq != last || headHash != prev {
		res.Problem = &Problem{Seq: headSeq, Reason: fmt.Sprintf("the chain head (seq %d, hash %s) does not name the last row (seq %d, hash %s)",
			headSeq, headHash, last, prev)}
		return res, nil
	}
	for _, a := range anchors {
		switch {
		case a.Seq > last:
			res.Problem = &Problem{Seq: a.Seq, Reason: fmt.Sprintf("%s names row %d (hash %s), but the chain ends at seq %d: rows were deleted from its end (truncated)",
				a.Name, a.Seq, a.Hash, last)}
			return res, nil
		case a.Seq == 0 && !byHash[a.Hash]:
			res.Problem = &Problem{Seq: last, Reason: fmt.Sprintf("%s: no row of the chain (which ends at seq %d) has hash %s: the chain was truncated or rewritten",
				a.Name, last, a.Hash)}
			return res, nil
		}
	}
	ids, err := r.UnchainedDecided(ctx, 1)
	if err != nil {
		return res, err
	}
	if len(ids) > 0 {
		res.Problem = &Problem{ElicitationID: ids[0], Reason: "decided but not in the chain"}
	}
	return res, nil
}
