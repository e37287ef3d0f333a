package main

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/store"
	"github.com/gatehouse-dev/gatehouse/internal/testserver"
)

// TestAuditVerifyFindsTheTamperedRow: decisions made through the real server form a
// chain `gatehouse audit verify` accepts (exit 0); after one stored field of one
// decided prompt is changed directly in the database, verify exits 1 naming that row.
func TestAuditVerifyFindsTheTamperedRow(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		dbURL := db.NewURL(t)
		p := startServe(t, dbURL)
		c := &testserver.Client{Base: p.URL, HC: &http.Client{}}
		sid := c.CreateSession(t, c.CreateAgent(t), "", "")
		var ids []string
		for i, action := range []string{"accept", "decline", "accept"} {
			parked, eid, _ := c.ParkClaude(t, sid, sid, "Bash", map[string]any{"command": "echo " + string(rune('a'+i))})
			if r := c.Do(t, http.MethodPost, "/v1/sessions/"+sid+"/elicitations/"+eid+"/resolve", map[string]any{"action": action}); r.Status != http.StatusAccepted {
				t.Fatalf("resolve: %d %s", r.Status, r.Body)
			}
			parked.Wait(t, 10*time.Second)
			ids = append(ids, eid)
		}
		p.Terminate(t)
		p.WaitExit(t, 15*time.Second)

		code, out, errOut := runCmd(t, childEnv(), "audit", "verify", "--database-url", dbURL)
		if code != 0 || !strings.Contains(out, "audit chain holds: 3 rows") {
			t.Fatalf("verify of an intact chain: exit %d\n%s%s", code, out, errOut)
		}

		st, err := store.Open(dbURL)
		if err != nil {
			t.Fatal(err)
		}
		sqlDB, _ := st.SQL()
		q := "UPDATE elicitations SET action = 'accept' WHERE id = ?"
		if db.Name == "postgres" {
			q = strings.Replace(q, "?", "$1", 1)
		}
		if _, err := sqlDB.ExecContext(context.Background(), q, ids[1]); err != nil {
			t.Fatal(err)
		}
		st.Close()

		code, out, errOut = runCmd(t, childEnv(), "audit", "verify", "--database-url", dbURL)
		if code != 1 || !strings.Contains(out, "seq=2 elicitation "+ids[1]) {
			t.Fatalf("verify after tampering with row 2 (%s): exit %d\n%s%s", ids[1], code, out, errOut)
		}
		t.Logf("verify says: %s", strings.TrimSpace(out))

		if code, _, errOut := runCmd(t, childEnv(), "audit", "verify", "--database-url", "sqlite:///nonexistent/g.db"); code != 2 {
			t.Fatalf("verify of a missing database: exit %d %s", code, errOut)
		}
	})
}
