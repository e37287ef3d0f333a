package markdown

import (
	"reflect"

	"github.com/PuerkitoBio/goquery"
	"strings"
	"testing"
)

func TestHTMLDropsActiveContent(t *testing.T) {
	r := New()
	src := "# Plan\n\n1. **Add** the `migration`\n2. <script>window.__pwned=1</script>\n\n" +
		"<img src=x onerror=\"window.__pwned=1\">\n\n[click](javascript:alert(1)) [docs](https://example.com/x)\n"
	got := r.HTML(src)
	// Raw HTML is shown as text (see TestHTMLShowsEverythingTheAgentWrote), so the
	// words may appear; no live element or attribute may.
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(got))
	if err != nil {
		t.Fatal(err)
	}
	if n := doc.Find("script, img, [onerror], a[href^='javascript']").Length(); n != 0 {
		t.Errorf("rendered plan keeps %d active elements:\n%s", n, got)
	}
	for _, bad := range []string{"<script", "<img", "javascript:"} {
		if strings.Contains(strings.ToLower(got), bad) {
			t.Errorf("rendered plan keeps %q:\n%s", bad, got)
		}
	}
	for _, want := range []string{"<h1>Plan</h1>", "<strong>Add</strong>", "<code>migration</code>", `href="https://example.com/x"`, "noreferrer"} {
		if !strings.Contains(got, want) {
			t.Errorf("rendered plan lacks %q:\n%s", want, got)
		}
	}
}

func TestInlineBold(t *testing.T) {
	cases := []struct {
		in   string
		want []Span
	}{
		{"Claude wants to call **Bash**", []Span{{"Claude wants to call ", false}, {"Bash", true}}},
		{"plain", []Span{{"plain", false}}},
		{"a **b** c **d", []Span{{"a ", false}, {"b", true}, {" c **d", false}}},
		{"**<script>**", []Span{{"<script>", true}}},
		{"", []Span{}},
	}
	for _, c := range cases {
		if got := InlineBold(c.in); !reflect.DeepEqual(got, c.want) {
			t.Errorf("InlineBold(%q) = %#v, want %#v", c.in, got, c.want)
		}
	}
}
