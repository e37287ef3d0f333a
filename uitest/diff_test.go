package uitest

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestBrowserHostileEditDiff: an Edit whose strings hold markup, script and a bidi
// override opens as a readable diff in a real browser: the removed and added lines
// are visible as text, nothing in them runs or becomes an element, and the same holds
// on the inbox card.
func TestBrowserHostileEditDiff(t *testing.T) {
	srv, c := startServer(t)
	sid := c.CreateSession(t, c.CreateAgent(t), "", "hostile edit")
	input := map[string]any{
		"file_path":  "/repo/index.html",
		"old_string": "<script>window.__pwned = 'script'</script>\n<p>keep</p>",
		"new_string": "<img src=x onerror=\"window.__pwned = 'img'\">\n<p>keep</p>\n<svg onload=\"window.__pwned = 'svg'\"></svg> \u202Etxt.exe",
	}
	parked, eid, _ := c.ParkClaude(t, sid, sid, "Edit", input)
	defer parked.Cancel()

	tb := newTab(t, srv)
	tb.open("/approve/" + sid + "/" + eid)
	tb.do(chromedp.WaitVisible(chromedp.CSS(`[data-testid="diff-file"] tr.d-add`)))
	if got := tb.text(`tr.d-del td.tx`); got != "<script>window.__pwned = 'script'</script>" {
		t.Errorf("removed line shows %q", got)
	}
	if got := tb.text(`tr.d-add td.tx`); got != `<img src=x onerror="window.__pwned = 'img'">` {
		t.Errorf("added line shows %q", got)
	}
	if !strings.Contains(tb.text(`tr.d-add:last-child td.tx`), "⟨U+202E⟩txt.exe") {
		t.Errorf("bidi override not made visible: %q", tb.text(`tr.d-add:last-child td.tx`))
	}
	if tb.eval(`window.__pwned !== undefined`) {
		t.Fatal("agent text ran as script")
	}
	if tb.eval(`!!document.querySelector('.tool img, .tool svg, .tool script') || document.body.innerText.includes("\u202E")`) {
		t.Fatal("agent text became markup, or a live bidi control is on the page")
	}
	if tb.eval(`document.querySelector('[data-testid="diff-file"]').getBoundingClientRect().height < 40`) {
		t.Fatal("the diff is not visible")
	}
	tb.screenshot("hostile-edit")

	tb.open("/inbox")
	tb.do(chromedp.WaitVisible(chromedp.CSS(`[data-eid="` + eid + `"] tr.d-add`)))
	if tb.eval(`window.__pwned !== undefined || !!document.querySelector('.card-tool img, .card-tool svg, .card-tool script')`) {
		t.Fatal("the inbox card ran or built agent markup")
	}
}
