package audit_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/audit"
	"github.com/gatehouse-dev/gatehouse/internal/auth"
	"github.com/gatehouse-dev/gatehouse/internal/sessions"
	"github.com/gatehouse-dev/gatehouse/internal/store"
	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
	"github.com/gatehouse-dev/gatehouse/models"
)

func newSession(t testing.TB, st *store.Store, parent string) *models.Session {
	t.Helper()
	ctx := context.Background()
	svc := sessions.New(st, &auth.Checker{Mode: auth.ModeNone, Grants: st})
	agent, err := svc.CreateAgent(ctx, auth.LocalUser, sessions.AgentInput{Name: "a"})
	if err != nil {
		t.Fatal(err)
	}
	sess, err := svc.CreateSession(ctx, auth.LocalUser, sessions.SessionInput{AgentID: agent.ID, ParentSessionID: parent})
	if err != nil {
		t.Fatal(err)
	}
	return sess
}

// park inserts n pending prompts in sess and returns their ids.
func park(t testing.TB, st *store.Store, sess *models.Session, prefix string, n int) []string {
	t.Helper()
	ids := make([]string, n)
	now := time.Now().UTC()
	for i := range ids {
		ids[i] = fmt.Sprintf("%s_%04d", prefix, i)
		params, _ := json.Marshal(map[string]any{"message": "run it?", "tool": "Bash", "input": map[string]any{"command": fmt.Sprintf("echo %d ünï", i)}})
		e := &models.Elicitation{ID: ids[i], SessionID: sess.ID, Origin: models.OriginClaudePermission, Params: params,
			Status: models.StatusPending, CreatedAt: now, ExpiresAt: now.Add(time.Hour)}
		if err := st.InsertElicitation(context.Background(), e); err != nil {
			t.Fatal(err)
		}
	}
	return ids
}

func verify(t testing.TB, st *store.Store) audit.Result {
	t.Helper()
	res, err := audit.Verify(context.Background(), st)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestDecisionsFormOneChain: decisions of every kind (a person's with content, a
// timeout, an abandonment) are chained in order, the chain verifies, and a second
// decision of the same prompt adds nothing.
func TestDecisionsFormOneChain(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		ctx := context.Background()
		st := testserver.OpenStore(t, db.NewURL(t))
		sess := newSession(t, st, "")
		ids := park(t, st, sess, "e", 4)
		at := time.Date(2026, 3, 1, 12, 0, 0, 123456789, time.UTC) // nanoseconds: stored as micro
		decisions := []models.Decision{
			{Status: models.StatusResolved, Action: "accept", Content: json.RawMessage(`{"answer": "yes", "n": [1, 2]}`), By: "alice", Via: models.ViaPage, At: at},
			{Status: models.StatusResolved, Action: "decline", By: "bob", Via: models.ViaAPI, At: at.Add(time.Second)},
			{Status: models.StatusExpired, By: "gatehouse", Via: models.ViaTimeout, At: at.Add(2 * time.Second)},
			{Status: models.StatusAbandoned, By: "gatehouse", Via: models.ViaGrace, At: at.Add(3 * time.Second)},
		}
		for i, d := range decisions {
			row, err := st.DecideElicitation(ctx, ids[i], sess.ID, d)
			if err != nil || row == nil {
				t.Fatalf("decide %d: %v %v", i, row, err)
			}
		}
		if row, err := st.DecideElicitation(ctx, ids[0], sess.ID, decisions[1]); err != nil || row != nil {
			t.Fatalf("second decision won: %v %v", row, err)
		}
		res := verify(t, st)
		if res.Problem != nil || res.Rows != 4 || res.HeadSeq != 4 {
			t.Fatalf("verify: %+v", res)
		}
		page, err := st.ChainPage(ctx, 0, 10)
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range page {
			if r.ElicitationID != ids[i] || r.Seq != int64(i+1) || r.Status != decisions[i].Status {
				t.Fatalf("row %d: %+v", i, r)
			}
		}
		if page[0].PrevHash != audit.Genesis || page[1].PrevHash != page[0].Hash {
			t.Fatalf("rows are not linked: %+v", page[:2])
		}
	})
}

// TestConcurrentDecidersOnTwoReplicasFormOneChain: two stores (two replicas' pools) on
// one database decide many prompts from many goroutines at once, several racing for
// the same prompt; every prompt is decided once and the chain has exactly one row per
// prompt, linked in one line.
func TestConcurrentDecidersOnTwoReplicasFormOneChain(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		ctx := context.Background()
		url := db.NewURL(t)
		a := testserver.OpenStore(t, url)
		b, err := store.Open(url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { b.Close() })
		sess := newSession(t, a, "")
		const n = 120
		ids := park(t, a, sess, "c", n)
		var wg sync.WaitGroup
		wins := make([]int, n)
		var mu sync.Mutex
		for w := range 8 {
			st := a
			if w%2 == 1 {
				st = b
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range n {
					i := (i + w*7) % n
					row, err := st.DecideElicitation(ctx, ids[i], sess.ID, models.Decision{Status: models.StatusResolved,
						Action: "accept", By: fmt.Sprintf("worker%d", w), Via: models.ViaAPI, At: time.Now()})
					if err != nil {
						t.Error(err)
						return
					}
					if row != nil {
						mu.Lock()
						wins[i]++
						mu.Unlock()
					}
				}
			}()
		}
		wg.Wait()
		for i, w := range wins {
			if w != 1 {
				t.Fatalf("prompt %d decided %d times", i, w)
			}
		}
		res := verify(t, b)
		if res.Problem != nil || res.Rows != n || res.HeadSeq != n {
			t.Fatalf("verify: rows %d head %d problem %v", res.Rows, res.HeadSeq, res.Problem)
		}
	})
}

// TestVerifyNamesTheFirstTamperedRow: changing a decided field, the params or a hash
// directly in the database is found, and the report names that row.
func TestVerifyNamesTheFirstTamperedRow(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		ctx := context.Background()
		st := testserver.OpenStore(t, db.NewURL(t))
		sess := newSession(t, st, "")
		ids := park(t, st, sess, "t", 6)
		for _, id := range ids {
			if _, err := st.DecideElicitation(ctx, id, sess.ID, models.Decision{Status: models.StatusResolved, Action: "decline",
				By: "alice", Via: models.ViaPage, At: time.Now()}); err != nil {
				t.Fatal(err)
			}
		}
		sqlDB, err := st.SQL()
		if err != nil {
			t.Fatal(err)
		}
		exec := func(q string, args ...any) {
			t.Helper()
			if _, err := sqlDB.ExecContext(ctx, rebind(db, q), args...); err != nil {
				t.Fatal(err)
			}
		}
		cases := []struct {
			name, tamper, undo string
			row                int
		}{
			{"action", "UPDATE elicitations SET action = 'accept' WHERE id = ?", "UPDATE elicitations SET action = 'decline' WHERE id = ?", 3},
			{"resolved_by", "UPDATE elicitations SET resolved_by = 'mallory' WHERE id = ?", "UPDATE elicitations SET resolved_by = 'alice' WHERE id = ?", 1},
			{"params", "UPDATE elicitations SET params = '{\"message\":\"harmless\"}' WHERE id = ?", "", 4},
			{"hash", "UPDATE audit_chain SET hash = '" + strings.Repeat("ab", 32) + "' WHERE elicitation_id = ?", "", 2},
		}
		for _, c := range cases {
			id := ids[c.row]
			exec(c.tamper, id)
			res := verify(t, st)
			if res.Problem == nil || res.Problem.ElicitationID != id || res.Problem.Seq != int64(c.row+1) {
				t.Fatalf("%s tampered on row %d (%s): verify says %v", c.name, c.row+1, id, res.Problem)
			}
			if c.undo == "" {
				break // params and hashes cannot be put back byte for byte here
			}
			exec(c.undo, id)
			if res := verify(t, st); res.Problem != nil {
				t.Fatalf("%s put back: still %v", c.name, res.Problem)
			}
		}
	})
}

// rebind turns ? placeholders into Postgres's $n.
func rebind(db testserver.DB, q string) string {
	if db.Name != "postgres" {
		return q
	}
	var b strings.Builder
	n := 0
	for _, c := range q {
		if c == '?' {
			n++
			fmt.Fprintf(&b, "$%d", n)
			continue
		}
		b.WriteRune(c)
	}
	return b.String()
}

// TestDecisionBytesCoverEveryField: (version 1) each decided field, the deciding rule's id
// included, changes what is hashed, so an edit to any of them breaks the chain.
func TestDecisionBytesCoverEveryField(t *testing.T) {
	base := audit.Decision{ElicitationID: "e", SessionID: "s", Status: "resolved", Action: "accept",
		ResolvedBy: "alice", ResolvedVia: "rule", ResolvedAt: time.Unix(1, 0), RuleID: "rule_1"}
	for name, edit := range map[string]func(*audit.Decision){
		"id": func(d *audit.Decision) { d.ElicitationID = "x" }, "session": func(d *audit.Decision) { d.SessionID = "x" },
		"status": func(d *audit.Decision) { d.Status = "x" }, "action": func(d *audit.Decision) { d.Action = "x" },
		"by": func(d *audit.Decision) { d.ResolvedBy = "x" }, "via": func(d *audit.Decision) { d.ResolvedVia = "x" },
		"at": func(d *audit.Decision) { d.ResolvedAt = time.Unix(2, 0) }, "rule": func(d *audit.Decision) { d.RuleID = "rule_2" },
	} {
		d := base
		edit(&d)
		if string(d.Bytes()) == string(base.Bytes()) {
			t.Errorf("changing %s leaves the hashed bytes unchanged", name)
		}
	}
}
