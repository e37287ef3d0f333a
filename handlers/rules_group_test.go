package handlers_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
)

// TestConcurrentRuleAnswersAreEachRecorded: hooks an allow rule answers at the same time
// (their decisions share commits) are each answered allow only once recorded — every one
// is in the audit chain, linked in order and re-hashing to its hash, counted on the rule,
// and its request and end are on the session's stream log.
func TestConcurrentRuleAnswersAreEachRecorded(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		srv := testserver.Start(t, db.NewURL(t))
		c := srv.Client("")
		sid := c.CreateSession(t, c.CreateAgent(t), "", "")
		rule := createRule(t, c, map[string]any{"effect": "allow", "tool": "Bash",
			"match": map[string]any{"kind": "prefix", "pattern": "go test"}, "scope": map[string]any{"kind": "session", "value": sid}})
		const n = 40
		var wg sync.WaitGroup
		errs := make(chan error, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				body := claudeRuleBody("Bash", map[string]any{"command": fmt.Sprintf("go test ./pkg%d", i)}, "/repo")
				r, err := c.Send(ctx, http.MethodPost, "/v1/sessions/"+sid+"/hooks/permission-request", body)
				if err != nil || r.Status != http.StatusOK || !strings.Contains(string(r.Body), `"behavior":"allow"`) {
					errs <- fmt.Errorf("hook %d: %v %v", i, err, r)
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}

		byRule := map[string]bool{}
		for _, row := range ruleRows(t, c, rule["id"].(string)) {
			if row.Action != nil && *row.Action == "accept" {
				byRule[row.ElicitationID] = true
			}
		}
		if len(byRule) != n {
			t.Fatalf("%d of %d rule answers in the audit chain", len(byRule), n)
		}
		if got := ruleByID(t, c, rule["id"].(string)); got["fire_count"] != float64(n) {
			t.Fatalf("rule fire_count = %v, want %d", got["fire_count"], n)
		}

		// The stream's log holds each prompt's request, then its end.
		st := c.OpenStream(t, "/v1/sessions/"+sid+"/stream?last_event_id=0")
		defer st.Close()
		requested, ended := map[string]bool{}, 0
		for ended < n {
			f := st.Next(t, 10*time.Second)
			if f.Event != "response.elicitation_request" && f.Event != "response.elicitation_resolved" {
				continue
			}
			eid, _ := f.Map(t)["elicitation_id"].(string)
			if !byRule[eid] {
				t.Fatalf("%s for a prompt no rule answered: %s", f.Event, eid)
			}
			if f.Event == "response.elicitation_request" {
				requested[eid] = true
				continue
			}
			if !requested[eid] {
				t.Fatalf("prompt %s ended on the stream before its request", eid)
			}
			ended++
		}
		if len(requested) != n {
			t.Fatalf("%d of %d requests on the stream", len(requested), n)
		}
	})
}
