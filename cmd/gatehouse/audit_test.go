package main

import (
	"context"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/audit"
	"github.com/gatehouse-dev/gatehouse/internal/store"
	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
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

// TestAuditVerifyHeadAndCheckpointsDetectTruncation: a chain whose last row (and its
// prompt) was deleted and whose head was rewound still verifies on its own; `audit
// verify --head` with the head recorded before, and `--checkpoint` with the signed
// checkpoints the server logged and appended to --audit-checkpoint-file, exit 1 naming
// the truncation. A checkpoint edited in the file is refused; no key, or a head that
// is not one, is exit 2.
func TestAuditVerifyHeadAndCheckpointsDetectTruncation(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		dbURL := db.NewURL(t)
		file := filepath.Join(t.TempDir(), "checkpoints.jsonl")
		secret := strings.Repeat("k", 32) // startServe's --session-secret
		p := startServe(t, dbURL, "--audit-checkpoint-file", file)
		c := &testserver.Client{Base: p.URL, HC: &http.Client{}}
		sid := c.CreateSession(t, c.CreateAgent(t), "", "")
		for i := range 3 {
			parked, eid, _ := c.ParkClaude(t, sid, sid, "Bash", map[string]any{"command": "echo " + string(rune('a'+i))})
			if r := c.Do(t, http.MethodPost, "/v1/sessions/"+sid+"/elicitations/"+eid+"/resolve", map[string]any{"action": "accept"}); r.Status != http.StatusAccepted {
				t.Fatalf("resolve: %d %s", r.Status, r.Body)
			}
			parked.Wait(t, 10*time.Second)
		}
		p.Terminate(t)
		p.WaitExit(t, 15*time.Second)
		signer := audit.NewSigner([]byte(secret))
		if log := p.stderr.String(); !strings.Contains(log, "level=INFO msg=\"audit checkpoint\"") || !strings.Contains(log, signer.PublicKey()) {
			t.Fatalf("the server logged no checkpoint, or not its key:\n%s", log)
		}

		code, out, errOut := runCmd(t, childEnv(), "audit", "verify", "--database-url", dbURL)
		m := regexp.MustCompile(`head seq=3 hash=([0-9a-f]{64})`).FindStringSubmatch(out)
		if code != 0 || m == nil {
			t.Fatalf("verify: exit %d\n%s%s", code, out, errOut)
		}
		recorded := m[1]
		// The day after, a replica takes the next checkpoint (the server's clock,
		// injected here): it names the head at seq 3.
		st, err := store.Open(dbURL)
		if err != nil {
			t.Fatal(err)
		}
		tomorrow := time.Now().UTC().Add(24 * time.Hour)
		cp, err := audit.NewCheckpointer(st, signer, func() time.Time { return tomorrow }, slog.New(slog.DiscardHandler), file).Tick(context.Background())
		if err != nil || cp == nil || cp.Seq != 3 {
			t.Fatalf("next day's checkpoint: %+v %v", cp, err)
		}
		withSecret := childEnv("GATEHOUSE_SESSION_SECRET=" + secret)
		if code, out, errOut := runCmd(t, withSecret, "audit", "verify", "--database-url", dbURL, "--checkpoint", file, "--head", "3:"+recorded); code != 0 || !strings.Contains(out, "reaches all 3 heads and checkpoints") {
			t.Fatalf("verify of the intact chain against its checkpoints: exit %d\n%s%s", code, out, errOut)
		}

		// Cut the last decision out: its chain row, its prompt, the head rewound.
		rows, err := st.ChainPage(context.Background(), 0, 10)
		if err != nil || len(rows) != 3 {
			t.Fatalf("chain: %v %v", rows, err)
		}
		sqlDB, _ := st.SQL()
		for _, q := range []struct {
			sql  string
			args []any
		}{
			{"DELETE FROM audit_chain WHERE seq = 3", nil},
			{"DELETE FROM elicitations WHERE id = ?", []any{rows[2].ElicitationID}},
			{"UPDATE audit_head SET seq = 2, prev_hash = ?, hash = ? WHERE id = 1", []any{rows[1].PrevHash, rows[1].Hash}},
		} {
			stmt := q.sql
			for i := 1; db.Name == "postgres" && strings.Contains(stmt, "?"); i++ {
				stmt = strings.Replace(stmt, "?", "$"+strconv.Itoa(i), 1)
			}
			if _, err := sqlDB.ExecContext(context.Background(), stmt, q.args...); err != nil {
				t.Fatal(err)
			}
		}
		st.Close()

		if code, out, _ := runCmd(t, childEnv(), "audit", "verify", "--database-url", dbURL); code != 0 {
			t.Fatalf("the cut chain on its own: exit %d %s", code, out) // why a head must be kept elsewhere
		}
		for _, head := range []string{"3:" + recorded, recorded} {
			code, out, errOut := runCmd(t, childEnv(), "audit", "verify", "--database-url", dbURL, "--head", head)
			if code != 1 || !strings.Contains(out, "BROKEN") || !strings.Contains(out, "truncated") {
				t.Fatalf("verify --head %s of the cut chain: exit %d\n%s%s", head, code, out, errOut)
			}
			t.Logf("verify --head says: %s", strings.TrimSpace(out))
		}
		code, out, errOut = runCmd(t, withSecret, "audit", "verify", "--database-url", dbURL, "--checkpoint", file)
		if code != 1 || !strings.Contains(out, "checkpoint "+tomorrow.Format(audit.DayLayout)) || !strings.Contains(out, "truncated") {
			t.Fatalf("verify --checkpoint of the cut chain: exit %d\n%s%s", code, out, errOut)
		}
		t.Logf("verify --checkpoint says: %s", strings.TrimSpace(out))

		// Someone "fixes" the checkpoint file to match the cut chain.
		body, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		edited := strings.Replace(string(body), `"seq":3,"hash":"`+recorded+`"`, `"seq":2,"hash":"`+rows[1].Hash+`"`, 1)
		if edited == string(body) {
			t.Fatalf("checkpoint file has no line for seq 3:\n%s", body)
		}
		if err := os.WriteFile(file, []byte(edited), 0o644); err != nil {
			t.Fatal(err)
		}
		pubFlag := []string{"--checkpoint-key", signer.PublicKey()}
		if code, out, errOut := runCmd(t, childEnv(), append([]string{"audit", "verify", "--database-url", dbURL, "--checkpoint", file}, pubFlag...)...); code != 1 || !strings.Contains(out, "REJECTED") || !strings.Contains(out, "signature does not verify") {
			t.Fatalf("verify with an edited checkpoint: exit %d\n%s%s", code, out, errOut)
		}
		for _, args := range [][]string{
			{"--checkpoint", file}, // no key, no secret
			{"--head", "3:nothex"}, // not a head
			{"--checkpoint", file + ".missing", pubFlag[0], pubFlag[1]}, // no such file
			{"--checkpoint", file, "--checkpoint-key", "abc"},           // not a key
		} {
			if code, out, errOut := runCmd(t, childEnv(), append([]string{"audit", "verify", "--database-url", dbURL}, args...)...); code != 2 {
				t.Fatalf("verify %v: exit %d\n%s%s", args, code, out, errOut)
			}
		}
	})
}
