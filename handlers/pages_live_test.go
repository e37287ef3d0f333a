package handlers_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
)

func fragment(t *testing.T, f testserver.Frame) *goquery.Document {
	t.Helper()
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(f.Data))
	if err != nil {
		t.Fatalf("fragment: %v", err)
	}
	return doc
}

func cardIDs(doc *goquery.Document) []string {
	return doc.Find(`[data-testid="card"]`).Map(func(_ int, s *goquery.Selection) string { return s.AttrOr("data-eid", "") })
}

// TestApproveEventsStream: the approval page's fragment stream sends the outcome panel
// when the prompt is decided elsewhere, and at once when it already was.
func TestApproveEventsStream(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		srv := testserver.Start(t, db.NewURL(t))
		c := srv.Client("")
		sid := c.CreateSession(t, c.CreateAgent(t), "", "")
		parked, eid, _ := c.ParkClaude(t, sid, sid, "Bash", map[string]any{"command": "ls"})
		st := c.OpenStream(t, "/approve/"+sid+"/"+eid+"/events")
		if ct := st.Header.Get("Content-Type"); ct != "text/event-stream" {
			t.Fatalf("Content-Type = %q", ct)
		}
		st.WaitFor(t, "ready", 10*time.Second)
		r := c.Do(t, http.MethodPost, "/v1/sessions/"+sid+"/elicitations/"+eid+"/resolve", map[string]any{"action": "accept"})
		if r.Status != http.StatusAccepted {
			t.Fatalf("resolve: %d %s", r.Status, r.Body)
		}
		rf := st.WaitFor(t, "resolved", 10*time.Second)
		doc := fragment(t, rf)
		o := doc.Find(`[data-testid="outcome"]`)
		if o.AttrOr("id", "") != "decision" || o.AttrOr("data-action", "") != "accept" ||
			!strings.Contains(o.Text(), "Approved") || !strings.Contains(o.Text(), "via the API") {
			t.Fatalf("outcome fragment: %s", rf.Data)
		}
		parked.Wait(t, 10*time.Second)

		late := c.OpenStream(t, "/approve/"+sid+"/"+eid+"/events")
		late.WaitFor(t, "ready", 10*time.Second)
		if !strings.Contains(late.WaitFor(t, "resolved", 10*time.Second).Data, "Approved") {
			t.Fatalf("late subscriber did not get the outcome at once")
		}
		if r := c.Do(t, http.MethodGet, "/approve/"+sid+"/elicit_00000000000000000000000000000000/events", nil); r.Status != http.StatusNotFound {
			t.Fatalf("unknown prompt stream: %d", r.Status)
		}
	})
}

// TestInboxPage: the inbox lists exactly the prompts the user may decide (edit access
// or more), grouped by root session with the newest group first, and its inline
// buttons decide with resolved_via inbox.
func TestInboxPage(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		srv := testserver.Start(t, db.NewURL(t), "--auth", "header")
		alice, bob, carol := srv.Client("alice@example.com"), srv.Client("bob@example.com"), srv.Client("carol@example.com")
		agent := alice.CreateAgent(t)
		alpha := alice.CreateSession(t, agent, "", "alpha")
		worker := alice.CreateSession(t, agent, alpha, "alpha-worker")
		beta := alice.CreateSession(t, agent, "", "beta")
		bobs := bob.CreateSession(t, bob.CreateAgent(t), "", "bob's")
		carols := carol.CreateSession(t, carol.CreateAgent(t), "", "carol's")
		grant := func(c *testserver.Client, sid, level string) {
			r := c.Do(t, http.MethodPut, "/v1/sessions/"+sid+"/permissions", map[string]any{"user": "alice@example.com", "level": level})
			if r.Status >= 300 {
				t.Fatalf("grant: %d %s", r.Status, r.Body)
			}
		}
		grant(bob, bobs, "read")
		grant(carol, carols, "edit")

		p1, e1, _ := alice.ParkClaude(t, worker, alpha, "Bash", map[string]any{"command": "make test"})
		p2, e2, _ := alice.ParkClaude(t, beta, beta, "Edit", map[string]any{"file_path": "/x.go"})
		e3 := openMCPForm(t, alice, alpha, "Pick a region", map[string]any{"type": "object",
			"properties": map[string]any{"region": map[string]any{"type": "string"}}})
		_, e4, _ := bob.ParkClaude(t, bobs, bobs, "Bash", map[string]any{"command": "bob only"})
		p5, e5, _ := carol.ParkClaude(t, carols, carols, "Bash", map[string]any{"command": "carol shares"})

		b := newBrowser(t, srv, "alice@example.com")
		p := b.get(t, "/inbox")
		mustStatus(t, p, http.StatusOK)
		groups := p.testid("group").Map(func(_ int, s *goquery.Selection) string { return s.AttrOr("data-root", "") })
		if strings.Join(groups, ",") != strings.Join([]string{carols, alpha, beta}, ",") {
			t.Fatalf("groups = %v, want carol's, alpha, beta", groups)
		}
		if got := strings.Join(cardIDs(p.Doc), ","); got != strings.Join([]string{e5, e3, e1, e2}, ",") {
			t.Fatalf("cards = %s, want %s", got, strings.Join([]string{e5, e3, e1, e2}, ","))
		}
		if strings.Contains(p.Body, e4) {
			t.Fatalf("read-only session's prompt is in the inbox")
		}
		if p.Doc.Find("title").Text() != "(4) Inbox — Gatehouse" || p.testid("pending-count").AttrOr("data-count", "") != "4" {
			t.Fatalf("count: title %q", p.Doc.Find("title").Text())
		}
		card := func(eid string) *goquery.Selection { return p.Doc.Find(`[data-testid="card"][data-eid="` + eid + `"]`) }
		if card(e1).Find(`[data-testid="card-owner"]`).Text() != "alpha-worker" || card(e1).Find(`[data-testid="card-approve"]`).Length() != 1 {
			t.Fatalf("sub-agent card: %s", p.Body)
		}
		if card(e3).Find(`[data-testid="card-approve"]`).Length() != 0 || card(e3).Find(`[data-testid="card-answer"]`).Length() != 1 {
			t.Fatalf("form prompt offers one-click approve")
		}
		tok := p.csrf(t)
		decide := func(sid, eid, action string, htmx bool) *page {
			return b.post(t, "/inbox/"+sid+"/"+eid, url.Values{"csrf": {tok}, "action": {action}, "next": {"/inbox"}}, htmx)
		}
		r := decide(worker, e1, "decline", false)
		mustStatus(t, r, http.StatusSeeOther)
		if r.Header.Get("Location") != "/inbox" {
			t.Fatalf("redirect to %q", r.Header.Get("Location"))
		}
		if d := decision(t, p1.Wait(t, 10*time.Second)); d["behavior"] != "deny" {
			t.Fatalf("decline from inbox: %v", d)
		}
		r = decide(beta, e2, "accept", true)
		mustStatus(t, r, http.StatusOK)
		if strings.TrimSpace(r.Body) != "" {
			t.Fatalf("htmx answer should be empty (the card goes away): %q", r.Body)
		}
		if d := decision(t, p2.Wait(t, 10*time.Second)); d["behavior"] != "allow" {
			t.Fatalf("approve from inbox: %v", d)
		}
		mustStatus(t, decide(alpha, e3, "accept", true), http.StatusBadRequest)
		mustStatus(t, decide(carols, e5, "accept", false), http.StatusSeeOther)
		p5.Wait(t, 10*time.Second)
		mustStatus(t, decide(bobs, e4, "accept", false), http.StatusForbidden)
		// Deciding twice: the second click is told someone was first.
		r = decide(beta, e2, "decline", true)
		if r.Status != http.StatusOK || !strings.Contains(r.text("flash"), "already decided") {
			t.Fatalf("second decision: %d %s", r.Status, r.Body)
		}
		for eid, sid := range map[string]string{e1: worker, e2: beta} {
			row := elicitationStatus(t, alice, sid, eid)
			if row["resolved_via"] != "inbox" || row["resolved_by"] != "alice@example.com" {
				t.Fatalf("%s resolved %v", eid, row)
			}
		}
		after := b.get(t, "/inbox")
		if got := cardIDs(after.Doc); len(got) != 1 || got[0] != e3 {
			t.Fatalf("inbox after deciding: %v", got)
		}
	})
}

// TestInboxStream: the inbox fragment stream sends the list at connect and again when
// the user's prompts come and go; multi-line fragments arrive whole (every line is its
// own data: line).
func TestInboxStream(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		srv := testserver.Start(t, db.NewURL(t), "--auth", "header")
		alice, bob := srv.Client("alice@example.com"), srv.Client("bob@example.com")
		sid := alice.CreateSession(t, alice.CreateAgent(t), "", "alpha")
		bobs := bob.CreateSession(t, bob.CreateAgent(t), "", "")
		st := alice.OpenStream(t, "/inbox/events")
		ff := st.WaitFor(t, "inbox", 10*time.Second)
		first := fragment(t, ff)
		if first.Find(`[data-testid="pending-count"]`).AttrOr("data-count", "") != "0" {
			t.Fatalf("first frame: %s", ff.Data)
		}
		openMCPForm(t, bob, bobs, "bob's secret prompt", map[string]any{})
		eid := openMCPForm(t, alice, sid, "first line\nsecond line", map[string]any{})
		f := st.WaitFor(t, "inbox", 10*time.Second)
		doc := fragment(t, f)
		if ids := cardIDs(doc); len(ids) != 1 || ids[0] != eid {
			t.Fatalf("after a new prompt: %v\n%s", ids, f.Data)
		}
		if strings.Contains(f.Data, "bob's secret") {
			t.Fatalf("another user's prompt reached alice's inbox stream")
		}
		if !strings.Contains(f.Data, "\n") || !strings.Contains(doc.Find(`[data-testid="card-preview"]`).Text(), "first line\nsecond line") {
			t.Fatalf("multi-line fragment lost lines: %q", f.Data)
		}
		r := alice.Do(t, http.MethodPost, "/v1/sessions/"+sid+"/elicitations/"+eid+"/resolve", map[string]any{"action": "accept"})
		if r.Status != http.StatusAccepted {
			t.Fatalf("resolve: %d", r.Status)
		}
		doc = fragment(t, st.WaitFor(t, "inbox", 10*time.Second))
		if ids := cardIDs(doc); len(ids) != 0 {
			t.Fatalf("decided prompt still listed: %v", ids)
		}
	})
}

// TestSessionPage: the session page shows the sub-agent tree with pending counts, the
// subtree's pending prompts and its recent decisions, and updates over its stream.
func TestSessionPage(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		srv := testserver.Start(t, db.NewURL(t), "--auth", "header")
		alice := srv.Client("alice@example.com")
		agent := alice.CreateAgent(t)
		root := alice.CreateSession(t, agent, "", "root")
		child := alice.CreateSession(t, agent, root, "child")
		grand := alice.CreateSession(t, agent, child, "grandchild")
		other := alice.CreateSession(t, agent, root, "other")
		pc, ec, _ := alice.ParkClaude(t, child, root, "Bash", map[string]any{"command": "one"})
		_, eg, _ := alice.ParkClaude(t, grand, root, "Bash", map[string]any{"command": "two"})

		b := newBrowser(t, srv, "alice@example.com")
		p := b.get(t, "/sessions/"+root)
		mustStatus(t, p, http.StatusOK)
		nodes := p.testid("tree-node").Map(func(_ int, s *goquery.Selection) string {
			return s.AttrOr("data-session", "") + "=" + s.AttrOr("data-pending", "")
		})
		want := []string{root + "=0", child + "=1", grand + "=1", other + "=0"}
		if strings.Join(nodes, " ") != strings.Join(want, " ") {
			t.Fatalf("tree = %v\nwant   %v", nodes, want)
		}
		if got := cardIDs(p.Doc); strings.Join(got, ",") != eg+","+ec {
			t.Fatalf("pending cards = %v", got)
		}
		if p.Doc.Find(`[data-eid="`+eg+`"] [data-testid="card-owner"]`).Text() != "child › grandchild" {
			t.Fatalf("grandchild card owner = %q", p.Doc.Find(`[data-eid="`+eg+`"] [data-testid="card-owner"]`).Text())
		}
		st := alice.OpenStream(t, "/sessions/"+root+"/events")
		st.WaitFor(t, "session", 10*time.Second)
		tok := p.csrf(t)
		mustStatus(t, b.post(t, "/inbox/"+child+"/"+ec, url.Values{"csrf": {tok}, "action": {"accept"}, "next": {"/sessions/" + root}}, false), http.StatusSeeOther)
		pc.Wait(t, 10*time.Second)
		sf := st.WaitFor(t, "session", 10*time.Second)
		doc := fragment(t, sf)
		if ids := cardIDs(doc); len(ids) != 1 || ids[0] != eg {
			t.Fatalf("live body pending = %v", ids)
		}
		row := doc.Find(`[data-testid="audit-row"]`)
		if row.Length() != 1 || row.AttrOr("data-eid", "") != ec || row.AttrOr("data-action", "") != "accept" || !strings.Contains(row.Text(), "alice@example.com") {
			t.Fatalf("audit trail: %s", sf.Data)
		}

		// A reader sees the page but gets no decide buttons.
		r := alice.Do(t, http.MethodPut, "/v1/sessions/"+root+"/permissions", map[string]any{"user": "rita@example.com", "level": "read"})
		if r.Status >= 300 {
			t.Fatalf("grant: %d", r.Status)
		}
		rp := newBrowser(t, srv, "rita@example.com").get(t, "/sessions/"+child)
		mustStatus(t, rp, http.StatusOK)
		if rp.testid("card").Length() != 1 || rp.testid("card-approve").Length() != 0 || rp.testid("card-reject").Length() != 0 {
			t.Fatalf("reader's session page: %s", rp.Body)
		}
		if crumbs := rp.testid("session-path").Find("li").Length(); crumbs != 2 {
			t.Fatalf("child page path has %d crumbs", crumbs)
		}
		mustStatus(t, newBrowser(t, srv, "eve@example.com").get(t, "/sessions/"+root), http.StatusNotFound)
	})
}
