package views_test

import (
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/gatehouse-dev/gatehouse/models"
	"github.com/gatehouse-dev/gatehouse/views"
)

// TestApproveHugeInputStaysSmall: 60 KB of nesting renders a page of tens of KB that
// says it is shortened and links the raw request (it rendered ~200 MB before).
func TestApproveHugeInputStaysSmall(t *testing.T) {
	deep := strings.Repeat(`{"a":`, 9900) + `"bottom"` + strings.Repeat("}", 9900)
	_, small := render(t, views.Approve(approvePage(t, models.OriginClaudePermission,
		`{"tool_name":"Bash","message":"Claude wants to call **Bash**","tool_input":{"command":"ls","x":1}}`)))
	doc, html := render(t, views.Approve(approvePage(t, models.OriginClaudePermission,
		`{"tool_name":"Bash","message":"Claude wants to call **Bash**","tool_input":{"command":"ls","x":`+deep+`}}`)))
	if len(html) > len(small)+80<<10 {
		t.Fatalf("page is %d bytes for a 60 KB input (baseline %d)", len(html), len(small))
	}
	want(t, doc, map[string]int{"tool-input": 1, "cut-notice": 1, "raw-link": 1, "approve": 1})
	if testids(doc, "raw-link").AttrOr("href", "") != "/approve/conv_a/elicit_b/raw" {
		t.Errorf("raw link = %q", testids(doc, "raw-link").AttrOr("href", ""))
	}
	if n := strings.Count(text(doc, "tool-input"), `"a":`); n > 8 {
		t.Errorf("tool input shows %d levels", n)
	}
}

// TestBidiControlsVisible: every piece of agent text on the page shows a bidi
// override as a visible marker, and none reaches the page as a live control.
func TestBidiControlsVisible(t *testing.T) {
	const rlo = "\u202E"
	d := approvePage(t, models.OriginClaudePermission, `{"tool_name":"Bash","message":"Claude wants to call **Bash`+rlo+`**",
		"tool_input":{"command":"echo safe `+rlo+`hs.lave","k":"v`+rlo+`"},"cwd":"/r`+rlo+`"}`)
	d.Agent = "agent" + rlo
	d.Path[1].Title = "title" + rlo
	doc, html := render(t, views.Approve(d))
	if strings.Contains(html, rlo) {
		t.Errorf("a live U+202E reached the page")
	}
	for _, id := range []string{"message", "command", "tool-input", "cwd", "agent", "session-title"} {
		if !strings.Contains(text(doc, id), "⟨U+202E⟩") {
			t.Errorf("%s = %q, want the marker", id, text(doc, id))
		}
	}
	card := views.Card{ID: "e1", Message: "m" + rlo, Summary: "s" + rlo, Vendor: "v" + rlo, CanDecide: true, QuickApprove: true}
	_, cardHTML := render(t, views.CardItem(card, "tok"))
	if strings.Contains(cardHTML, rlo) || strings.Count(cardHTML, "⟨U+202E⟩") != 3 {
		t.Errorf("card: %s", cardHTML)
	}
}

// TestCardNeedsReview: a card whose preview is cut offers "Open to review" in place
// of Approve (so the a shortcut cannot approve it), and shows a refusal notice.
func TestCardNeedsReview(t *testing.T) {
	c := views.Card{ID: "e1", ApproveURL: "/approve/s/e1", DecideURL: "/inbox/s/e1", Message: "m", Summary: "long…",
		CanDecide: true, NeedsReview: true, Notice: "open it first"}
	doc, _ := render(t, views.CardItem(c, "tok"))
	want(t, doc, map[string]int{"card-approve": 0, "card-review": 1, "card-reject": 1, "card-cut": 1, "card-notice": 1})
	if doc.Find(`[data-shortcut="a"]`).Length() != 0 || testids(doc, "card-review").AttrOr("href", "") != "/approve/s/e1" {
		t.Errorf("review link wrong")
	}
}

// TestApproveURLPunycode: a homograph host is shown and linked as punycode, with its
// Unicode form named beside it.
func TestApproveURLPunycode(t *testing.T) {
	doc, _ := render(t, views.Approve(approvePage(t, models.OriginCodex, `{"mode":"url","message":"Sign in","url":"https://gіthub.com/login"}`)))
	host, link := text(doc, "url-host"), testids(doc, "url-link")
	if !strings.HasPrefix(host, "xn--") || !strings.Contains(text(doc, "url-host-unicode"), "gіthub.com") {
		t.Errorf("host = %q, unicode = %q", host, text(doc, "url-host-unicode"))
	}
	if href := link.AttrOr("href", ""); !strings.HasPrefix(href, "https://"+host+"/") || !strings.Contains(link.Text(), host) {
		t.Errorf("link = %q %q", href, link.Text())
	}
}

// TestFormFieldOrder: fields follow the recorded schema order.
func TestFormFieldOrder(t *testing.T) {
	doc, _ := render(t, views.Approve(approvePage(t, models.OriginMCPEvent, `{"message":"Set up","requestedSchema":{"type":"object",
		"properties":{"name":{"type":"string"},"age":{"type":"integer"},"zone":{"type":"string"}}},"property_order":["zone","name","age"]}`)))
	got := strings.Join(testids(doc, "field").Map(func(_ int, s *goquery.Selection) string { return s.AttrOr("data-field", "") }), ",")
	if got != "zone,name,age" {
		t.Errorf("fields = %s", got)
	}
}
