package handlers_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/audit"
	"github.com/gatehouse-dev/gatehouse/internal/ids"
	"github.com/gatehouse-dev/gatehouse/internal/store"
	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
	"github.com/gatehouse-dev/gatehouse/models"
)

// TestJournaledRuleAnswersAreStoredAtStart: a rule's answer leaves once its decision
// is in the decision journal, and its prompt, audit link, fire count and events are
// stored right behind it. A crash in between leaves the decision journaled: the next
// start stores it — linked into the audit chain, counted on its rule, on the stream
// log — before answering anything; and a journaled decision whose prompt was stored
// already (the SQLite journal forgets after the prompt's commit) is not stored twice.
func TestJournaledRuleAnswersAreStoredAtStart(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		url := db.NewURL(t)
		srv := testserver.Start(t, url)
		c := srv.Client("")
		sid := c.CreateSession(t, c.CreateAgent(t), "", "")
		rule := createRule(t, c, map[string]any{"effect": "allow", "tool": "Bash",
			"match": map[string]any{"kind": "prefix", "pattern": "go test"}, "scope": map[string]any{"kind": "session", "value": sid}})
		ruleID := rule["id"].(string)
		r := c.Do(t, http.MethodPost, "/v1/sessions/"+sid+"/hooks/permission-request",
			claudeRuleBody("Bash", map[string]any{"command": "go test ./a"}, "/repo"))
		if r.Status != http.StatusOK || !strings.Contains(string(r.Body), `"behavior":"allow"`) {
			t.Fatalf("hook: %d %s", r.Status, r.Body)
		}
		before := ruleRows(t, c, ruleID)
		if len(before) != 1 {
			t.Fatalf("%d rule answers in the audit chain, want 1", len(before))
		}
		srv.Stop()

		// What a crash leaves: one decision journaled and never stored, and one whose
		// prompt is stored but whose journal row was not yet forgotten.
		now := time.Now().UTC().Truncate(time.Microsecond)
		lost := journalRow(ids.New(ids.ElicitationPrefix), sid, ruleID, now)
		stored := journalRow(before[0].ElicitationID, sid, ruleID, now)
		st, err := store.Open(url)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.JournalDecided(context.Background(), []*models.Elicitation{lost, stored}); err != nil {
			t.Fatal(err)
		}
		st.Close()

		srv = testserver.Start(t, url)
		c = srv.Client("")
		after := ruleRows(t, c, ruleID)
		if len(after) != 2 || after[0].ElicitationID != stored.ID || after[1].ElicitationID != lost.ID {
			t.Fatalf("rule answers in the audit chain after the restart: %+v", after)
		}
		if got := ruleByID(t, c, ruleID); got["fire_count"] != float64(2) {
			t.Fatalf("rule fire_count = %v, want 2", got["fire_count"])
		}
		s := c.OpenStream(t, "/v1/sessions/"+sid+"/stream?last_event_id=0")
		defer s.Close()
		for _, want := range []string{"response.elicitation_request", "response.elicitation_resolved"} {
			for {
				f := s.Next(t, 10*time.Second)
				if f.Event == want && f.Map(t)["elicitation_id"] == lost.ID {
					break
				}
			}
		}
		srv.Stop()

		st, err = store.Open(url)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		left, err := st.JournaledDecisions(context.Background(), time.Now().Add(time.Hour), 10)
		if err != nil || len(left) != 0 {
			t.Fatalf("journal after the replay: %d rows, %v", len(left), err)
		}
	})
}

// journalRow is a prompt as a rule's answer journals it: decided at once, by rule.
func journalRow(id, sid, ruleID string, at time.Time) *models.Elicitation {
	action, via, by := models.ActionAccept, models.ViaRule, "local"
	params, _ := json.Marshal(map[string]any{"message": "Claude wants to run `go test ./b`", "approve_path": "/approve/" + sid + "/" + id})
	return &models.Elicitation{ID: id, SessionID: sid, Origin: models.OriginClaudePermission, Params: params,
		Status: models.StatusResolved, Action: &action, ResolvedBy: &by, ResolvedVia: &via, CreatedAt: at,
		ResolvedAt: &at, ExpiresAt: at.Add(time.Hour), RuleID: &ruleID, Logged: models.LoggedResolved, Notified: models.NotifiedAll}
}

// ruleRows exports the audit chain — checking every row re-hashes and links to the
// one before — and returns the rows rule ruleID decided, in chain order.
func ruleRows(t *testing.T, c *testserver.Client, ruleID string) []audit.Row {
	t.Helper()
	r := c.Do(t, http.MethodGet, "/v1/audit", nil)
	if r.Status != http.StatusOK {
		t.Fatalf("export: %d %s", r.Status, r.Body)
	}
	var out []audit.Row
	prev := ""
	sc := bufio.NewScanner(strings.NewReader(string(r.Body)))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var row audit.Row
		if err := json.Unmarshal(sc.Bytes(), &row); err != nil {
			t.Fatal(err)
		}
		if got := rehash(t, row); got != row.Hash {
			t.Fatalf("row %s re-hashes to %s, exported %s", row.ElicitationID, got, row.Hash)
		}
		if prev != "" && row.PrevHash != prev {
			t.Fatalf("row %s links to %s, the row before is %s", row.ElicitationID, row.PrevHash, prev)
		}
		prev = row.Hash
		if row.RuleID != nil && *row.RuleID == ruleID && row.ResolvedVia != nil && *row.ResolvedVia == models.ViaRule {
			out = append(out, row)
		}
	}
	return out
}
