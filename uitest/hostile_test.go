package uitest

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestBrowserHostileText: in a real browser, a bidi override in a command shows as a
// visible marker (the text reads in the order it runs), and a card whose preview is
// shortened shows "Open to review" where Approve would be, so the a shortcut cannot
// approve it unseen.
func TestBrowserHostileText(t *testing.T) {
	srv, c := startServer(t)
	sid := c.CreateSession(t, c.CreateAgent(t), "", "hostile")
	short, es, _ := c.ParkClaude(t, sid, sid, "Bash", map[string]any{"command": "echo \u202Egnp.exe"})
	long, el, _ := c.ParkClaude(t, sid, sid, "Bash", map[string]any{"command": "echo ok; " + strings.Repeat("true; ", 100) + "rm -rf ~"})
	defer short.Cancel()
	defer long.Cancel()

	tb := newTab(t, srv)
	tb.open("/approve/" + sid + "/" + es)
	if got := tb.text(`[data-testid="command"]`); got != "echo ⟨U+202E⟩gnp.exe" {
		t.Fatalf("command shows %q", got)
	}
	if tb.eval(`document.body.innerText.includes("\u202E")`) {
		t.Fatal("a live U+202E is on the page")
	}
	tb.screenshot("bidi")

	tb.open("/inbox")
	tb.waitStreamOpen("inbox-list")
	tb.do(chromedp.WaitVisible(chromedp.CSS(`[data-eid="` + el + `"] [data-testid="card-review"]`)))
	if tb.eval(`!!document.querySelector('[data-eid="` + el + `"] [data-testid="card-approve"]')`) {
		t.Fatal("shortened card has an Approve button")
	}
	// j focuses the newest card (the long one); a must do nothing, so the r after it
	// is what decides the card: a rejection.
	tb.do(chromedp.KeyEvent("j"), chromedp.KeyEvent("a"), chromedp.KeyEvent("r"), chromedp.WaitNotPresent(card(el)))
	if d := hookDecision(t, long); d["behavior"] != "deny" {
		t.Fatalf("the shortened card was decided by a: %v", d)
	}
}
