package audit_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/audit"
	"github.com/gatehouse-dev/gatehouse/internal/store"
	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
	"github.com/gatehouse-dev/gatehouse/models"
)

// parkIDs inserts pending prompts with the given ids in sess.
func parkIDs(t testing.TB, st *store.Store, sess *models.Session, ids []string) {
	t.Helper()
	now := time.Now().UTC()
	for _, id := range ids {
		params, _ := json.Marshal(map[string]any{"message": "run " + id + "?"})
		if err := st.InsertElicitation(context.Background(), &models.Elicitation{ID: id, SessionID: sess.ID,
			Origin: models.OriginClaudePermission, Params: params, Status: models.StatusPending, CreatedAt: now,
			ExpiresAt: now.Add(time.Hour)}); err != nil {
			t.Fatal(err)
		}
	}
}

func backfill(t *testing.T, st *store.Store) store.Backfill {
	t.Helper()
	res, err := st.ChainUnchained(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestBackfillChainsOnlyDecisionsFromBeforeTheChain: decided prompts from before the
// chain existed are chained by the backfill, marked as backfilled, and the chain
// holds; a decided prompt that appears unchained after the chain began is never
// chained (verify names it), while one that predates the chain's first row still is.
func TestBackfillChainsOnlyDecisionsFromBeforeTheChain(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		ctx := context.Background()
		st := testserver.OpenStore(t, db.NewURL(t))
		exec := sqlExec(t, db, st)
		sess := newSession(t, st, "")
		ids := park(t, st, sess, "b", 5)
		now := time.Now().UTC()
		unchainedDecision(exec, ids[0], now.Add(-2*time.Hour))
		unchainedDecision(exec, ids[1], now.Add(-time.Hour))
		if res := verify(t, st); res.Problem == nil || res.Problem.Reason != "decided but not in the chain" {
			t.Fatalf("verify before backfill: %+v", res)
		}
		if res := backfill(t, st); res != (store.Backfill{Chained: 2}) {
			t.Fatalf("backfill of an empty chain: %+v", res)
		}
		if res := backfill(t, st); res != (store.Backfill{}) {
			t.Fatalf("second backfill: %+v", res)
		}
		decideAll(t, st, sess, ids[2:3], decline("alice"))
		rows := chain(t, st)
		if len(rows) != 3 || !rows[0].Backfilled || !rows[1].Backfilled || rows[2].Backfilled || rows[0].Version != audit.V2 {
			t.Fatalf("chain after backfill and a live decision: %+v", rows)
		}
		if res := verify(t, st); res.Problem != nil || res.Rows != 3 || res.Backfilled != 2 {
			t.Fatalf("verify after backfill: %+v", res)
		}

		// Decided after the chain began, and not in it: refused, and reported.
		unchainedDecision(exec, ids[3], now)
		if res := backfill(t, st); res != (store.Backfill{Refused: 1}) {
			t.Fatalf("backfill of a decision made after the chain began: %+v", res)
		}
		if res := verify(t, st); res.Problem == nil || res.Problem.ElicitationID != ids[3] || res.Problem.Reason != "decided but not in the chain" {
			t.Fatalf("verify of a refused row: %+v", res.Problem)
		}
		// Decided before the chain's first row (a straggler from the older version):
		// still chained, marked; the refused one stays refused.
		unchainedDecision(exec, ids[4], now.Add(-3*time.Hour))
		if res := backfill(t, st); res != (store.Backfill{Chained: 1, Refused: 1}) {
			t.Fatalf("backfill of a row predating the chain: %+v", res)
		}
		rows = chain(t, st)
		if last := rows[len(rows)-1]; last.ElicitationID != ids[4] || !last.Backfilled {
			t.Fatalf("last row: %+v", last)
		}
		if res := verify(t, st); res.Problem == nil || res.Problem.ElicitationID != ids[3] {
			t.Fatalf("verify: %+v", res.Problem)
		}
		_ = ctx
	})
}

// TestBackfillDoesNotLaunderAnEditedDecision: someone edits the last chained decision
// (decline → accept), deletes its chain row, rewinds the head and clears the row's
// chained mark. The start-up backfill must not chain the edited row again (then the
// chain would verify); verify names it.
func TestBackfillDoesNotLaunderAnEditedDecision(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		st := testserver.OpenStore(t, db.NewURL(t))
		exec := sqlExec(t, db, st)
		sess := newSession(t, st, "")
		ids := park(t, st, sess, "l", 3)
		decideAll(t, st, sess, ids, decline("alice"))
		rows := chain(t, st)
		exec(`UPDATE elicitations SET action = 'accept', chained = FALSE WHERE id = ?`, ids[2])
		exec(`DELETE FROM audit_chain WHERE seq = 3`)
		exec(`UPDATE audit_head SET seq = 2, prev_hash = ?, hash = ? WHERE id = 1`, rows[1].PrevHash, rows[1].Hash)

		if res := backfill(t, st); res.Chained != 0 || res.Refused != 1 {
			t.Fatalf("backfill after the edit: %+v", res)
		}
		res := verify(t, st)
		if res.Problem == nil || res.Problem.ElicitationID != ids[2] || res.Problem.Reason != "decided but not in the chain" {
			t.Fatalf("verify after the edit and the backfill: rows %d, problem %v", res.Rows, res.Problem)
		}
	})
}

// TestBackfillOfManyRowsKeepsByteOrder: a first backfill larger than one batch, with
// ids that sort differently byte by byte than in a natural-language collation and
// several decided at the same instant, chains them all in one run, in the order
// verification expects.
func TestBackfillOfManyRowsKeepsByteOrder(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		st := testserver.OpenStore(t, db.NewURL(t))
		exec := sqlExec(t, db, st)
		sess := newSession(t, st, "")
		var ids []string
		for i := range 450 {
			ids = append(ids, fmt.Sprintf("%s_%03d", []string{"B", "a-x", "a_x", "ab", "b", "Z"}[i%6], i))
		}
		parkIDs(t, st, sess, ids)
		at := time.Now().UTC().Add(-time.Hour).Truncate(time.Second)
		for i, id := range ids {
			unchainedDecision(exec, id, at.Add(time.Duration(i%7)*time.Second)) // many ties
		}
		if res := backfill(t, st); res != (store.Backfill{Chained: 450}) {
			t.Fatalf("backfill: %+v", res)
		}
		if res := verify(t, st); res.Problem != nil || res.Rows != 450 || res.Backfilled != 450 {
			t.Fatalf("verify: %+v", res)
		}
	})
}

// TestVerifyRejectsABackfillMarkAfterTheChainBegan: a row marked backfilled (its hash
// recomputed to match) that was decided after the chain began is reported: the
// backfill never writes one.
func TestVerifyRejectsABackfillMarkAfterTheChainBegan(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		st := testserver.OpenStore(t, db.NewURL(t))
		exec := sqlExec(t, db, st)
		sess := newSession(t, st, "")
		ids := park(t, st, sess, "m", 3)
		decideAll(t, st, sess, ids, decline("alice"))
		last := chain(t, st)[2]
		forged := audit.LinkV2(&last.Entry, true, last.PrevHash)
		exec(`UPDATE audit_chain SET backfilled = TRUE, hash = ? WHERE seq = 3`, forged)
		exec(`UPDATE audit_head SET hash = ? WHERE id = 1`, forged)
		res := verify(t, st)
		if res.Problem == nil || res.Problem.Seq != 3 || !strings.Contains(res.Problem.Reason, "marked backfilled, but decided after the chain began") {
			t.Fatalf("verify: %v", res.Problem)
		}
	})
}
