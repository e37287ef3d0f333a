package handlers_test

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
)

// bulkPark is one parked Claude hook and the session that owns its prompt.
type bulkPark struct {
	sid, eid string
	hook     *testserver.Parked
}

func namedAgent(t *testing.T, c *testserver.Client, name string) string {
	t.Helper()
	r := c.Do(t, http.MethodPost, "/v1/agents", map[string]any{"name": name})
	if r.Status != http.StatusCreated {
		t.Fatalf("create agent: %d %s", r.Status, r.Body)
	}
	return r.JSON(t)["id"].(string)
}

func selection(tok, action, reason string, ids ...string) url.Values {
	v := url.Values{"csrf": {tok}, "action": {action}, "select": ids}
	if reason != "" {
		v.Set("feedback", reason)
	}
	return v
}

// TestInboxBulkAnswer: one bulk approve and one bulk reject answer 50 parked Claude
// hooks, each with its own verdict row and hook answer (the reason reaches every
// rejected one; no approval carries a rule); a prompt that needs review is skipped by
// the approve and said so; a stale selection is reported, not decided again; another
// person's prompt is not found; the CSRF token is required and bad input is a 400.
func TestInboxBulkAnswer(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		srv := testserver.Start(t, db.NewURL(t), "--auth", "header")
		alice, bob := srv.Client("alice@example.com"), srv.Client("bob@example.com")
		agent := alice.CreateAgent(t)
		alpha := alice.CreateSession(t, agent, "", "alpha")
		worker := alice.CreateSession(t, agent, alpha, "alpha-worker")
		beta := alice.CreateSession(t, agent, "", "beta")
		var parks []bulkPark
		for i := range 50 {
			sid, watch := alpha, alpha
			switch i % 3 {
			case 1:
				sid = worker
			case 2:
				sid, watch = beta, beta
			}
			p, eid, _ := alice.ParkClaude(t, sid, watch, "Bash", map[string]any{"command": fmt.Sprintf("echo %d", i)})
			parks = append(parks, bulkPark{sid: sid, eid: eid, hook: p})
		}
		long := "echo ok; " + strings.Repeat("x", 400) + "; rm -rf /"
		longHook, longID, _ := alice.ParkClaude(t, alpha, alpha, "Bash", map[string]any{"command": long})
		formID := openMCPForm(t, alice, beta, "Pick a region", map[string]any{"type": "object",
			"properties": map[string]any{"region": map[string]any{"type": "string"}}})
		bobs := bob.CreateSession(t, bob.CreateAgent(t), "", "bob's")
		bobHook, bobID, _ := bob.ParkClaude(t, bobs, bobs, "Bash", map[string]any{"command": "bob's own"})

		b := newBrowser(t, srv, "alice@example.com")
		p := b.get(t, "/inbox")
		mustStatus(t, p, http.StatusOK)
		if n := p.testid("card-select").Length(); n != 52 {
			t.Fatalf("%d selectable cards, want 52", n)
		}
		if p.Doc.Find(`[data-eid="`+longID+`"] [data-testid="card-review"]`).Length() != 1 {
			t.Fatalf("the long command's card does not ask for review")
		}
		form := p.testid("bulk-form")
		if form.AttrOr("action", "") != "/inbox/bulk" || form.AttrOr("hx-post", "") != "/inbox/bulk" || form.Find(`input[name="csrf"]`).Length() != 1 {
			t.Fatalf("bulk form must post with and without htmx and carry the token")
		}
		if f := p.Doc.Find(`[data-testid="card-select"]`).First().AttrOr("form", ""); f != form.AttrOr("id", "") {
			t.Fatalf("card checkboxes belong to form %q, not the bulk form", f)
		}
		tok := p.csrf(t)
		ids := func(ps []bulkPark) []string {
			out := make([]string, len(ps))
			for i := range ps {
				out[i] = ps[i].eid
			}
			return out
		}
		approved, rejected := parks[:30], parks[30:]

		// Without the token nothing is decided.
		for _, bad := range []string{"", tok + "x"} {
			mustStatus(t, b.post(t, "/inbox/bulk", selection(bad, "accept", "", ids(parks)...), false), http.StatusForbidden)
			mustStatus(t, b.post(t, "/inbox/bulk", selection(bad, "accept", "", ids(parks)...), true), http.StatusForbidden)
		}
		// Bad input decides nothing either.
		mustStatus(t, b.post(t, "/inbox/bulk", selection(tok, "accept_remember", "", ids(approved)...), false), http.StatusBadRequest)
		mustStatus(t, b.post(t, "/inbox/bulk", selection(tok, "accept", ""), false), http.StatusBadRequest)
		badFilter := selection(tok, "accept", "", ids(approved)...)
		badFilter.Set("older_than", "soon")
		mustStatus(t, b.post(t, "/inbox/bulk", badFilter, false), http.StatusBadRequest)
		mustStatus(t, b.post(t, "/inbox/bulk", selection(tok, "decline", strings.Repeat("r", 4001), ids(approved)...), false), http.StatusBadRequest)
		for _, pk := range parks {
			if pk.hook.Done() {
				t.Fatalf("a refused bulk post woke hook %s", pk.eid)
			}
		}

		// Approve 30 (plain form post, filter kept), with the long one, the form one and
		// bob's: those three are skipped and reported.
		sel := selection(tok, "accept", "", append(ids(approved), longID, formID, bobID)...)
		sel.Set("tool", "Bash")
		r := b.post(t, "/inbox/bulk", sel, false)
		mustStatus(t, r, http.StatusSeeOther)
		if loc := r.Header.Get("Location"); loc != "/inbox?tool=Bash" {
			t.Fatalf("redirect to %q", loc)
		}
		next := b.get(t, "/inbox?tool=Bash")
		flash := next.text("flash")
		for _, want := range []string{"Approved 30 requests.", "Skipped 1 request that need review", "Skipped 1 request that need answers", "1 request was not found"} {
			if !strings.Contains(flash, want) {
				t.Fatalf("flash %q lacks %q", flash, want)
			}
		}
		for _, pk := range approved {
			d := decision(t, pk.hook.Wait(t, 10*time.Second))
			if toJSON(d) != `{"behavior":"allow"}` {
				t.Fatalf("bulk approve answered %s (a bulk answer must not carry a rule)", toJSON(d))
			}
		}
		if longHook.Done() || bobHook.Done() {
			t.Fatalf("bulk approve decided a prompt it must skip")
		}
		for sid, eid := range map[string]string{alpha: longID, beta: formID} {
			if st := elicitationStatus(t, alice, sid, eid)["status"]; st != "pending" {
				t.Fatalf("skipped prompt %s is %v", eid, st)
			}
		}
		if st := elicitationStatus(t, bob, bobs, bobID)["status"]; st != "pending" {
			t.Fatalf("another person's prompt is %v", st)
		}

		// Reject the other 20 and the long one with one reason, via htmx; the selection
		// also holds 3 already approved (stale): reported, left as they were.
		const reason = "Not now: batch rejected while the release is frozen"
		stale := ids(approved[:3])
		r = b.post(t, "/inbox/bulk", selection(tok, "decline", "  "+reason+"  ", append(append(ids(rejected), longID), stale...)...), true)
		mustStatus(t, r, http.StatusOK)
		rep := r.testid("bulk-report")
		if rep.AttrOr("data-decided", "") != "21" || rep.AttrOr("data-already", "") != "3" || rep.AttrOr("data-needs-review", "") != "0" {
			t.Fatalf("bulk report: %s", r.Body)
		}
		if !strings.Contains(rep.Text(), "Rejected 21 requests.") || !strings.Contains(rep.Text(), "3 requests were already decided") {
			t.Fatalf("report text %q", rep.Text())
		}
		if got := cardIDs(r.Doc); len(got) != 1 || got[0] != formID {
			t.Fatalf("refreshed list = %v, want only the form prompt", got)
		}
		if r.Doc.Find(`#inbox-list[hx-swap-oob]`).Length() != 1 {
			t.Fatalf("the refreshed list is not swapped out of band")
		}
		for _, pk := range rejected {
			d := decision(t, pk.hook.Wait(t, 10*time.Second))
			if d["behavior"] != "deny" || d["message"] != reason {
				t.Fatalf("bulk reject answered %s", toJSON(d))
			}
		}
		if d := decision(t, longHook.Wait(t, 10*time.Second)); d["behavior"] != "deny" || d["message"] != reason {
			t.Fatalf("needs-review prompt rejected as %s", toJSON(d))
		}
		for i, pk := range parks {
			row := elicitationStatus(t, alice, pk.sid, pk.eid)
			want := "accept"
			if i >= 30 {
				want = "decline"
			}
			if row["action"] != want || row["resolved_via"] != "inbox" || row["resolved_by"] != "alice@example.com" {
				t.Fatalf("prompt %d: %v", i, row)
			}
		}

		// Approving rejected ones is stale too: reported, not re-decided.
		r = b.post(t, "/inbox/bulk", selection(tok, "accept", "", ids(rejected[:2])...), true)
		if rep := r.testid("bulk-report"); rep.AttrOr("data-already", "") != "2" || rep.AttrOr("data-decided", "") != "0" {
			t.Fatalf("stale approve: %s", r.Body)
		}
		if row := elicitationStatus(t, alice, rejected[0].sid, rejected[0].eid); row["action"] != "decline" {
			t.Fatalf("a stale selection re-decided a prompt: %v", row)
		}
		bobHook.Cancel()
	})
}

// TestInboxFilters: agent (id or name), session (with its sub-agents), tool and age
// narrow the inbox; filters combine; the page's live stream keeps the filter; a bad
// filter is a 400.
func TestInboxFilters(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		srv := testserver.Start(t, db.NewURL(t), "--auth", "header")
		alice := srv.Client("alice@example.com")
		builder, reviewer := namedAgent(t, alice, "builder"), namedAgent(t, alice, "reviewer")
		a1 := alice.CreateSession(t, builder, "", "a1")
		a1child := alice.CreateSession(t, builder, a1, "a1-child")
		b1 := alice.CreateSession(t, reviewer, "", "b1")
		_, bashA, _ := alice.ParkClaude(t, a1, a1, "Bash", map[string]any{"command": "make"})
		_, editChild, _ := alice.ParkClaude(t, a1child, a1, "Edit", map[string]any{"file_path": "/x.go", "old_string": "a", "new_string": "b"})
		_, bashB, _ := alice.ParkClaude(t, b1, b1, "Bash", map[string]any{"command": "ls"})

		b := newBrowser(t, srv, "alice@example.com")
		list := func(query string) []string {
			t.Helper()
			p := b.get(t, "/inbox"+query)
			mustStatus(t, p, http.StatusOK)
			got := cardIDs(p.Doc)
			sort.Strings(got)
			return got
		}
		want := func(ids ...string) []string {
			sort.Strings(ids)
			return ids
		}
		for q, w := range map[string][]string{
			"":                                 want(bashA, editChild, bashB),
			"?agent=" + builder:                want(bashA, editChild),
			"?agent=reviewer":                  want(bashB),
			"?agent=nobody":                    want(),
			"?session=" + a1:                   want(bashA, editChild),
			"?session=" + a1child:              want(editChild),
			"?session=conv_unknown":            want(),
			"?tool=Bash":                       want(bashA, bashB),
			"?tool=Bash&agent=builder":         want(bashA),
			"?tool=Edit&session=" + a1:         want(editChild),
			"?older_than=1ms":                  want(bashA, editChild, bashB),
			"?older_than=1h":                   want(),
			"?older_than=1ms&agent=" + builder: want(bashA, editChild),
		} {
			if got := list(q); !slices.Equal(got, w) {
				t.Errorf("/inbox%s = %v, want %v", q, got, w)
			}
		}
		p := b.get(t, "/inbox?tool=Edit&agent=builder")
		if sse := p.testid("inbox-list").AttrOr("sse-connect", ""); sse != "/inbox/events?agent=builder&tool=Edit" {
			t.Fatalf("live stream drops the filter: %q", sse)
		}
		if !strings.Contains(p.text("pending-count"), "match the filter") || p.testid("filter-clear").Length() != 1 {
			t.Fatalf("a filtered inbox does not say so: %q", p.text("pending-count"))
		}
		if v := p.testid("inbox-filter").Find(`input[name="tool"]`).AttrOr("value", ""); v != "Edit" {
			t.Fatalf("filter form shows tool %q", v)
		}
		mustStatus(t, b.get(t, "/inbox?older_than=soon"), http.StatusBadRequest)
		mustStatus(t, b.get(t, "/inbox?older_than=-5m"), http.StatusBadRequest)

		// The stream sends only what matches: a new Bash prompt does not change an
		// Edit-only list; the next Edit prompt arrives with the first.
		st := alice.OpenStream(t, "/inbox/events?tool=Edit")
		if got := cardIDs(fragment(t, st.WaitFor(t, "inbox", 10*time.Second))); len(got) != 1 || got[0] != editChild {
			t.Fatalf("filtered stream first frame: %v", got)
		}
		_, bash2, _ := alice.ParkClaude(t, a1, a1, "Bash", map[string]any{"command": "make again"})
		_, edit2, _ := alice.ParkClaude(t, b1, b1, "Edit", map[string]any{"file_path": "/y.go", "old_string": "a", "new_string": "b"})
		got := cardIDs(fragment(t, st.WaitFor(t, "inbox", 10*time.Second)))
		sort.Strings(got)
		if !slices.Equal(got, want(editChild, edit2)) {
			t.Fatalf("filtered stream after new prompts: %v (bash %s)", got, bash2)
		}
	})
}
