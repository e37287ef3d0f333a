package audit

import (
	"context"
	"fmt"
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
	if p.Seq == 0 {
		return fmt.Sprintf("elicitation %s: %s", p.ElicitationID, p.Reason)
	}
	return fmt.Sprintf("row seq=%d elicitation %s: %s", p.Seq, p.ElicitationID, p.Reason)
}

// Result is what Verify found.
type Result struct {
	// Rows is how many chain rows were checked.
	Rows int64
	// HeadSeq and HeadHash are the chain's head as stored (record HeadHash somewhere
	// else to detect a rewrite of the whole chain later: see README).
	HeadSeq  int64
	HeadHash string
	// Problem is the first row that does not match; nil when the chain holds.
	Problem *Problem
}

// Verify walks the whole chain in order, recomputing each row's hash from the stored
// prompt and the previous row's stored hash, and stops at the first row that does not
// match: a changed decided field, params or content, a changed, missing or reordered
// row, or a prompt whose chain row is gone. Then it checks that the head names the
// last row and that no decided prompt is missing from the chain. It reads the chain a
// page at a time (constant memory).
func Verify(ctx context.Context, r ChainReader) (Result, error) {
	var res Result
	headSeq, headHash, err := r.AuditHead(ctx)
	if err != nil {
		return res, err
	}
	res.HeadSeq, res.HeadHash = headSeq, headHash
	prev, last := Genesis, int64(0)
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
			}
			if want := row.Expected(prev); want != row.Hash {
				return bad("stored hash %s, recomputed %s: the row or its prompt was changed", row.Hash, want)
			}
			prev, last = row.Hash, row.Seq
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
	ids, err := r.UnchainedDecided(ctx, 1)
	if err != nil {
		return res, err
	}
	if len(ids) > 0 {
		res.Problem = &Problem{ElicitationID: ids[0], Reason: "decided but not in the chain"}
	}
	return res, nil
}
