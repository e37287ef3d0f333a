package uitest

import (
	"net/http"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

func card(eid string) chromedp.CSS { return chromedp.CSS(cardSel(eid)) }

func cardSel(eid string) string { return `[data-testid="card"][data-eid="` + eid + `"]` }

// TestBrowserInbox: the inbox lists pending prompts newest first; j/a approves with
// the keyboard, the card leaves and the tab title counts down; a new prompt appears
// live; k/r rejects; Enter opens a card's approval page.
func TestBrowserInbox(t *testing.T) {
	srv, c := startServer(t)
	agent := c.CreateAgent(t)
	alpha := c.CreateSession(t, agent, "", "alpha: refactor")
	worker := c.CreateSession(t, agent, alpha, "alpha-worker")
	beta := c.CreateSession(t, agent, "", "beta: docs")
	p1, e1, _ := c.ParkClaude(t, worker, alpha, "Bash", map[string]any{"command": "go test ./..."})
	p2, e2, _ := c.ParkClaude(t, beta, beta, "Write", map[string]any{"file_path": "/repo/README.md", "content": "# Docs"})

	tb := newTab(t, srv)
	tb.open("/inbox")
	tb.waitStreamOpen("inbox-list")
	if got := run(tb, chromedp.Title()); got != "(2) Inbox — Gatehouse" {
		t.Fatalf("title = %q", got)
	}
	tb.screenshot("inbox")

	// j focuses the first (newest) card: e2. a approves it.
	tb.do(chromedp.KeyEvent("j"))
	if !tb.eval(`document.activeElement.getAttribute("data-eid") === "` + e2 + `"`) {
		t.Fatal("j did not focus the newest card")
	}
	tb.do(chromedp.KeyEvent("a"), chromedp.WaitNotPresent(card(e2)))
	if d := hookDecision(t, p2); d["behavior"] != "allow" {
		t.Fatalf("keyboard approve: %v", d)
	}
	run(tb, chromedp.Poll[bool](`document.title === "(1) Inbox — Gatehouse"`, chromedp.WithPollingTimeout(stepTimeout)))
	if !tb.eval(`document.activeElement.getAttribute("data-eid") === "` + e1 + `"`) {
		t.Fatal("focus did not move to the next card")
	}

	// A new prompt appears without a reload.
	p3, e3, _ := c.ParkClaude(t, beta, beta, "Bash", map[string]any{"command": "make docs"})
	tb.do(chromedp.WaitVisible(card(e3)))
	run(tb, chromedp.Poll[bool](`document.title === "(2) Inbox — Gatehouse"`, chromedp.WithPollingTimeout(stepTimeout)))
	if !tb.eval(`document.activeElement.getAttribute("data-eid") === "` + e1 + `"`) {
		t.Fatal("a live update moved the focus")
	}
	// k moves up to the new card; r rejects it.
	tb.do(chromedp.KeyEvent("k"))
	if !tb.eval(`document.activeElement.getAttribute("data-eid") === "` + e3 + `"`) {
		t.Fatal("k did not move to the previous card")
	}
	tb.do(chromedp.KeyEvent("r"), chromedp.WaitNotPresent(card(e3)))
	if d := hookDecision(t, p3); d["behavior"] != "deny" {
		t.Fatalf("keyboard reject: %v", d)
	}
	// Enter opens the focused card — also when the reject's live update replaced the
	// cards between the focus and the key (the key then meets the body, and the page
	// sends it to the card that had focus).
	tb.focus(cardSel(e1))
	tb.do(chromedp.KeyEvent(kb.Enter), chromedp.WaitVisible(chromedp.CSS(`[data-testid="form-plain"]`)))
	if got := run(tb, chromedp.Location()); got != srv.URL+"/approve/"+worker+"/"+e1 {
		t.Fatalf("Enter opened %q", got)
	}
	r := c.Do(t, http.MethodGet, "/v1/sessions/"+beta+"/elicitations/"+e2, nil)
	if via := r.JSON(t)["resolved_via"]; via != "inbox" {
		t.Fatalf("resolved_via = %v", via)
	}
	p1.Cancel()
}
