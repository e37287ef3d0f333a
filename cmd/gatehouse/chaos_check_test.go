package main

// The judge of TestChaos (chaos_test.go): the invariants checked once a run is over.

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
)

// storedRow is an elicitation row as the database holds it.
type storedRow struct {
	id, sid, status, origin         string
	action, resolvedBy, resolvedVia sql.NullString
	params                          string
}

// checker judges a finished run; every violation is collected by invariant and shown
// (the first few of each) at the end.
type checker struct {
	t        *testing.T
	r        *chaosRun
	db       *sql.DB
	rows     map[string]*storedRow
	problems map[string][]string
}

func (c *checker) fail(invariant, format string, args ...any) {
	if c.problems == nil {
		c.problems = map[string][]string{}
	}
	c.problems[invariant] = append(c.problems[invariant], fmt.Sprintf(format, args...))
}

func (c *checker) loadRows() {
	c.rows = map[string]*storedRow{}
	rows, err := c.db.Query(`SELECT id, session_id, status, origin, action, resolved_by, resolved_via, params::text FROM elicitations`)
	if err != nil {
		c.t.Fatalf("read elicitations: %v", err)
	}
	defer rows.Close()
	for rows.Next() {
		var s storedRow
		if err := rows.Scan(&s.id, &s.sid, &s.status, &s.origin, &s.action, &s.resolvedBy, &s.resolvedVia, &s.params); err != nil {
			c.t.Fatalf("scan elicitation: %v", err)
		}
		c.rows[s.id] = &s
	}
	if err := rows.Err(); err != nil {
		c.t.Fatalf("read elicitations: %v", err)
	}
}

func (c *checker) rowSummary() map[string]int {
	out := map[string]int{}
	for _, s := range c.rows {
		k := s.status
		if s.action.Valid {
			k += "/" + s.action.String
		}
		out[k]++
	}
	return out
}

// checkAnswers: (a) every client's final answer is its own prompt's verdict, or the
// "no decision" answer when its prompt ended without one — checked against the row
// the API reports for its id.
func (c *checker) checkAnswers() {
	const inv = "(a) each request got its own verdict or no decision"
	owner := &testserver.Client{Base: c.r.rs.live()[0], User: chaosOwner, HC: &http.Client{}}
	policyIDs := map[string]string{} // tag → prompt id
	for _, s := range c.rows {
		if i := strings.Index(s.params, "[cp"); i >= 0 {
			if j := strings.Index(s.params[i:], "]"); j > 0 {
				policyIDs[s.params[i:i+j+1]] = s.id
			}
		}
	}
	for _, q := range c.r.requests {
		if q.failed != "" || q.final == nil {
			c.fail(inv, "%s: %s", q, q.failed)
			continue
		}
		if q.kind == "policy" {
			q.id = policyIDs[q.tags[len(q.tags)-1]]
			if q.id == "" {
				c.fail(inv, "%s: the attempt that answered (%s) has no stored prompt; answer %s", q, q.tags[len(q.tags)-1], q.finalX)
				continue
			}
		}
		state := owner.Do(c.t, http.MethodGet, "/v1/sessions/"+q.sid+"/elicitations/"+q.id, nil).JSON(c.t)
		var want string
		decided := state["status"] == "resolved" && state["action"] != nil
		switch {
		case state["status"] == "pending":
			c.fail(inv, "%s: answered %s but its prompt is still pending", q, q.finalX)
			continue
		case decided:
			want = state["action"].(string)
		}
		got, msg := answerOf(q)
		ok := false
		switch q.kind {
		case "claude":
			ok = map[string]string{"accept": "allow", "decline": "deny", "": ""}[want] == got
			if ok && want == "decline" {
				by, _ := state["resolved_by"].(string)
				if msg != fmt.Sprintf("%s declines %s", by, q.id) {
					ok = false
				}
			}
		case "codex":
			ok = map[string]string{"accept": "accept", "decline": "decline", "": ""}[want] == got
		case "policy":
			wantMsg := map[string]string{"accept": "POLICY_ACTION_ALLOW", "decline": "POLICY_ACTION_DENY Approval was declined.",
				"": "POLICY_ACTION_DENY Approval was not granted."}[want]
			ok = strings.TrimSpace(got+" "+msg) == wantMsg
		}
		if !ok {
			c.fail(inv, "%s: client got %q %q (%s) but its row says %v", q, got, msg, q.finalX, state)
		}
	}
}

// answerOf reads a client's final answer: the decision and the message it carries.
func answerOf(q *chaosRequest) (decision, message string) {
	r := q.final
	if r.Status != http.StatusOK {
		return fmt.Sprintf("<status %d>", r.Status), string(r.Body)
	}
	if len(r.Body) == 0 {
		return "", ""
	}
	var m struct {
		HookSpecificOutput struct {
			Decision struct {
				Behavior string `json:"behavior"`
				Message  string `json:"message"`
			} `json:"decision"`
		} `json:"hookSpecificOutput"`
		Decision string `json:"decision"`
		Result   string `json:"result"`
		Reason   string `json:"reason"`
	}
	if err := json.Unmarshal(r.Body, &m); err != nil {
		return "<not JSON>", string(r.Body)
	}
	switch q.kind {
	case "claude":
		return m.HookSpecificOutput.Decision.Behavior, m.HookSpecificOutput.Decision.Message
	case "codex":
		return m.Decision, ""
	default:
		return m.Result, m.Reason
	}
}

// checkVerdicts: (b) every resolve that won is the stored decision, no prompt has two
// winners, and every stored human decision was given by someone who tried it.
func (c *checker) checkVerdicts() {
	const inv = "(b) every verdict stored once, by its giver"
	byEID := map[string][]*verdictAttempt{}
	for _, v := range c.r.verdicts {
		byEID[v.eid] = append(byEID[v.eid], v)
	}
	for eid, vs := range byEID {
		row := c.rows[eid]
		var winners []*verdictAttempt
		for _, v := range vs {
			if v.outcome == "resolved" {
				winners = append(winners, v)
			}
			if v.outcome == "not_found" {
				c.fail(inv, "%s's verdict on %s answered not_found (%s)", v.person, eid, v.x)
			}
		}
		if row == nil {
			c.fail(inv, "verdicts were given on %s, which has no row", eid)
			continue
		}
		if len(winners) > 1 {
			c.fail(inv, "%s has %d winners: %s and %s", eid, len(winners), winners[0].x, winners[1].x)
		}
		if len(winners) == 1 {
			w := winners[0]
			if row.status != "resolved" || row.resolvedBy.String != w.person || row.action.String != w.action {
				c.fail(inv, "%s's winning verdict %s on %s is not what is stored: %s by %s (%s)",
					w.person, w.action, eid, row.action.String, row.resolvedBy.String, row.status)
			}
		}
		for _, v := range vs {
			if v.outcome == "already_resolved" && v.resolvedBy != row.resolvedBy.String && row.resolvedBy.Valid {
				c.fail(inv, "%s was told %s had been resolved by %q, but the row says %q", v.person, eid, v.resolvedBy, row.resolvedBy.String)
			}
		}
	}
	for _, row := range c.rows {
		if row.status != "resolved" {
			continue
		}
		if row.resolvedVia.String != "api" {
			c.fail(inv, "%s resolved via %q, not through the resolve API the people used", row.id, row.resolvedVia.String)
		}
		given := slices.ContainsFunc(byEID[row.id], func(v *verdictAttempt) bool {
			return v.person == row.resolvedBy.String && v.action == row.action.String && (v.outcome == "resolved" || v.outcome == "")
		})
		if !given {
			c.fail(inv, "%s is stored as %s by %q, a verdict nobody saw win (attempts: %d)",
				row.id, row.action.String, row.resolvedBy.String, len(byEID[row.id]))
		}
	}
}

// checkLog: (b) the durable event log — what a stream replays with Last-Event-ID —
// holds exactly one resolved event per ended prompt, on its own session and on the
// root; and each person's reconnecting stream saw each of them exactly once, gap-free.
func (c *checker) checkLog() {
	const inv = "(b) each decided prompt resolved once on the streams"
	type key struct{ sid, eid string }
	counts := map[key]int{}
	rows, err := c.db.Query(`SELECT session_id, elicitation_id, count(*) FROM session_events
		WHERE type = 'response.elicitation_resolved' GROUP BY session_id, elicitation_id`)
	if err != nil {
		c.t.Fatalf("read the event log: %v", err)
	}
	for rows.Next() {
		var k key
		var n int
		if err := rows.Scan(&k.sid, &k.eid, &n); err != nil {
			c.t.Fatalf("scan the event log: %v", err)
		}
		counts[k] = n
	}
	rows.Close()
	ended := map[string]bool{}
	for _, row := range c.rows {
		want := 1
		if row.status == "pending" {
			want = 0
		} else {
			ended[row.id] = true
		}
		for _, sid := range []string{row.sid, c.r.root} {
			if n := counts[key{sid, row.id}]; n != want {
				c.fail(inv, "%s (%s, %s by %q) has %d resolved events in session %s's log, want %d%s",
					row.id, row.status, row.action.String, row.resolvedBy.String, n, sid, want, c.whenDecided(row))
			}
		}
	}
	for _, w := range c.r.watchers {
		for _, p := range w.problems {
			c.fail(inv, "%s's stream: %s", w.person.name, p)
		}
		for eid, seqs := range w.resolved {
			if len(seqs) != 1 {
				c.fail(inv, "%s's stream showed %s resolved %d times (seqs %v)", w.person.name, eid, len(seqs), seqs)
			}
			if !ended[eid] {
				c.fail(inv, "%s's stream showed %s resolved, but its row is not ended", w.person.name, eid)
			}
		}
		for eid := range ended {
			if _, ok := w.resolved[eid]; !ok {
				c.fail(inv, "%s's stream never showed %s resolved (%s)", w.person.name, eid, c.rows[eid].status)
			}
		}
	}
}

// whenDecided says when and where a prompt's winning verdict was given, relative to
// the database outage and the SIGKILLs, to explain a missing event.
func (c *checker) whenDecided(row *storedRow) string {
	for _, v := range c.r.verdicts {
		if v.eid != row.id || v.person != row.resolvedBy.String || v.action != row.action.String || (v.outcome != "resolved" && v.outcome != "") {
			continue
		}
		note := fmt.Sprintf(" — decided by a resolve on %s answered at %s (%s)", v.x.base, v.x.done.Format("15:04:05.000"), v.outcomeOrUnknown())
		if !v.x.done.Before(c.r.outageStart) && !v.x.sent.After(c.r.outageEnd) {
			note += fmt.Sprintf(", during the database outage %s – %s", c.r.outageStart.Format("15:04:05.000"), c.r.outageEnd.Format("15:04:05.000"))
		}
		for _, k := range c.r.kills {
			if k.url == v.x.base && k.at.After(v.x.sent) && k.at.Sub(v.x.done) < time.Second {
				note += fmt.Sprintf(", %s before that replica was SIGKILLed", k.at.Sub(v.x.done).Round(time.Millisecond))
			}
		}
		return note
	}
	return ""
}

// checkServerErrors: (c) no 5xx but 503s, and those only while the database was down.
func (c *checker) checkServerErrors() {
	const inv = "(c) no 5xx except 503 while the database was down"
	from, to := c.r.outageStart.Add(-chaosOutageMargin), c.r.outageEnd.Add(chaosOutageMargin)
	for _, x := range c.r.tf.serverErr {
		switch {
		case x.status != http.StatusServiceUnavailable:
			c.fail(inv, "%s", x)
		case x.done.Before(from) || x.sent.After(to):
			c.fail(inv, "503 outside the outage (%s – %s): %s", c.r.outageStart.Format("15:04:05.000"),
				c.r.outageEnd.Format("15:04:05.000"), x)
		case !strings.Contains(x.body, `"unavailable"`) && !strings.Contains(x.body, `"error"`):
			c.fail(inv, "503 without the error envelope: %s", x)
		}
	}
}

// checkMemory: (d) every replica stayed under the bound.
func (c *checker) checkMemory(s *rssSampler) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.samples == 0 {
		c.fail("(d) memory bounded", "no RSS sample was taken")
	}
	for slot, b := range s.max {
		if b > chaosRSSLimit {
			c.fail("(d) memory bounded", "replica %d reached %d MiB RSS (bound %d MiB)", slot, b>>20, chaosRSSLimit>>20)
		}
	}
}

// checkStderr: no replica reported a data race or a panic.
func (c *checker) checkStderr(rs *replicaSet) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	for _, p := range rs.all {
		out := p.stderr.String()
		for _, bad := range []string{"WARNING: DATA RACE", "panic:", "fatal error:"} {
			if i := strings.Index(out, bad); i >= 0 {
				c.fail("replicas healthy", "%s printed %q:\n%.3000s", p.URL, bad, out[i:])
			}
		}
	}
}

func (c *checker) report() {
	invs := make([]string, 0, len(c.problems))
	for inv := range c.problems {
		invs = append(invs, inv)
	}
	sort.Strings(invs)
	for _, inv := range invs {
		ps := c.problems[inv]
		shown := ps[:min(len(ps), 15)]
		c.t.Errorf("%s: %d violations; first %d:\n  %s", inv, len(ps), len(shown), strings.Join(shown, "\n  "))
	}
	if len(invs) > 0 {
		c.t.Logf("seed %d; rerun with %s=%d", c.r.seed, chaosSeedEnv, c.r.seed)
	}
}
