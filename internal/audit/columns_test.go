package audit_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/audit"
	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
	"github.com/gatehouse-dev/gatehouse/models"
)

// TestEditingAnyColumnBreaksTheChain: every column of a decided prompt's record —
// ids, session, origin, params, status, action, content, who, via, when decided, the
// rule, the MCP call key, when created and when it expires — is covered by its chain
// row: changed directly in the database, verify fails naming that row. The rows are
// edited from the last to the first, so each edit is the first problem verify meets.
func TestEditingAnyColumnBreaksTheChain(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		ctx := context.Background()
		st := testserver.OpenStore(t, db.NewURL(t))
		exec := sqlExec(t, db, st)
		sess := newSession(t, st, "")
		other := newSession(t, st, "")
		later := time.Date(2031, 1, 2, 3, 4, 5, 0, time.UTC)
		edits := []struct {
			column, set string
			arg         any
		}{
			{"id", "id = ?", "edited"},
			{"session_id", "session_id = ?", other.ID},
			{"origin", "origin = ?", models.OriginPolicy},
			{"params", "params = ?", `{"message":"harmless"}`},
			{"status", "status = ?", models.StatusExpired},
			{"action", "action = ?", "accept"},
			{"content", "content = ?", `{"answer":"no"}`},
			{"resolved_by", "resolved_by = ?", "mallory"},
			{"resolved_via", "resolved_via = ?", models.ViaTimeout},
			{"resolved_at", "resolved_at = ?", later},
			{"rule_id", "rule_id = ?", "rule_other"},
			{"call_key", "call_key = ?", "other_call"},
			{"created_at", "created_at = ?", later},
			{"expires_at", "expires_at = ?", later},
		}
		now := time.Now().UTC()
		ids := make([]string, len(edits))
		for i := range edits {
			ids[i] = fmt.Sprintf("col_%02d", i)
			key := "call_" + ids[i]
			if err := st.InsertElicitation(ctx, &models.Elicitation{ID: ids[i], SessionID: sess.ID, Origin: models.OriginClaudePermission,
				Params: json.RawMessage(`{"message":"run it?","tool":"Bash"}`), Status: models.StatusPending,
				CreatedAt: now, ExpiresAt: now.Add(time.Hour), CallKey: &key}); err != nil {
				t.Fatal(err)
			}
			if row, err := st.DecideElicitation(ctx, ids[i], sess.ID, models.Decision{Status: models.StatusResolved, Action: "decline",
				Content: json.RawMessage(`{"answer":"yes"}`), By: "alice", Via: models.ViaRule, RuleID: "rule_1", At: now}); err != nil || row == nil {
				t.Fatalf("decide: %v %v", row, err)
			}
		}
		if res := verify(t, st); res.Problem != nil || res.Rows != int64(len(edits)) {
			t.Fatalf("verify before any edit: %+v", res)
		}
		for i := len(edits) - 1; i >= 0; i-- {
			e := edits[i]
			exec("UPDATE elicitations SET "+e.set+" WHERE id = ?", e.arg, ids[i])
			res := verify(t, st)
			if res.Problem == nil || res.Problem.ElicitationID != ids[i] || res.Problem.Seq != int64(i+1) {
				t.Fatalf("%s edited on row %d (%s): verify says %v", e.column, i+1, ids[i], res.Problem)
			}
		}
	})
}

// TestVersion1RowsStillVerify: rows chained by the earlier encoding (version 1, the
// column's default, as an earlier release or a replica still running one writes them)
// verify with it — including a prompt whose wait an ask rule set and that a person
// decided, which version 1 hashed without the rule — and new rows chain on after them
// with version 2. An edit to a version 1 row is still found.
func TestVersion1RowsStillVerify(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		st := testserver.OpenStore(t, db.NewURL(t))
		exec := sqlExec(t, db, st)
		sess := newSession(t, st, "")
		ids := park(t, st, sess, "v", 4)
		at := time.Now().UTC().Truncate(time.Microsecond)
		exec(`UPDATE elicitations SET rule_id = 'rule_ask' WHERE id = ?`, ids[1]) // an ask rule set its wait
		prev := audit.Genesis
		for i, id := range ids[:2] {
			// What a version 1 deciding statement wrote: the decision, then the chain
			// row without a version, hashed as version 1 hashed.
			exec(`UPDATE elicitations SET status = 'resolved', action = 'decline', resolved_by = 'alice', resolved_via = 'page',
				resolved_at = ?, chained = TRUE WHERE id = ?`, at, id)
			exec(`INSERT INTO audit_chain (seq, elicitation_id, prev_hash, hash) VALUES (?, ?, ?, ?)`, i+1, id, prev, audit.Genesis)
			r := chain(t, st)[i]
			d := audit.Decision{ElicitationID: id, SessionID: sess.ID, Status: "resolved", Action: "decline",
				ResolvedBy: "alice", ResolvedVia: "page", ResolvedAt: at} // no rule: a person decided
			h := audit.Link(d, r.Origin, r.Params, r.Content, prev)
			exec(`UPDATE audit_chain SET hash = ? WHERE seq = ?`, h, i+1)
			exec(`UPDATE audit_head SET seq = ?, prev_hash = ?, hash = ? WHERE id = 1`, i+1, prev, h)
			prev = h
		}
		decideAll(t, st, sess, ids[2:], decline("bob"))
		rows := chain(t, st)
		if len(rows) != 4 || rows[0].Version != audit.V1 || rows[1].Version != audit.V1 || rows[2].Version != audit.V2 || rows[3].PrevHash != rows[2].Hash {
			t.Fatalf("chain: %+v", rows)
		}
		if res := verify(t, st); res.Problem != nil || res.Rows != 4 {
			t.Fatalf("verify of a chain of version 1 and 2 rows: %+v", res)
		}
		exec(`UPDATE elicitations SET action = 'accept' WHERE id = ?`, ids[0])
		if res := verify(t, st); res.Problem == nil || res.Problem.Seq != 1 || res.Problem.ElicitationID != ids[0] {
			t.Fatalf("verify after editing a version 1 row: %v", res.Problem)
		}
	})
}
