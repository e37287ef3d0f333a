package prompt

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/internal/markdown"
	"github.com/gatehouse-dev/gatehouse/models"
)

// deepInput is about 60 KB of nesting: {"a":{"a":…}} 9,900 levels deep (Go's JSON
// decoder refuses more than 10,000).
func deepInput() string {
	const n = 9900
	return strings.Repeat(`{"a":`, n) + "1" + strings.Repeat("}", n)
}

// wideInput is about 60 KB of short keys at the top level and long strings.
func wideInput() string {
	var b strings.Builder
	b.WriteString(`{"command":"ls"`)
	for i := range 3000 {
		b.WriteString(`,"k` + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + itoa(i) + `":"` + strings.Repeat("v", 12) + `"`)
	}
	b.WriteString(`,"long":"` + strings.Repeat("L", 20000) + `"}`)
	return b.String()
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

// TestDescribeBoundsHugeToolInput: a 60 KB input, deep or wide, is shown within the
// page budget (depth ≤ MaxDepth, ≤ MaxRendered bytes, long strings cut with a
// marker), the prompt says it is cut, and the list may not approve it in one click.
// Before the bound, the deep input pretty-printed to hundreds of megabytes.
func TestDescribeBoundsHugeToolInput(t *testing.T) {
	for name, input := range map[string]string{"deep": deepInput(), "wide": wideInput()} {
		t.Run(name, func(t *testing.T) {
			if len(input) < 55<<10 {
				t.Fatalf("input is only %d bytes", len(input))
			}
			js := `{"tool_name":"Bash","message":"Claude wants to call **Bash**","content_preview":"Bash(…)","tool_input":` + input + `}`
			var m map[string]any
			if err := json.Unmarshal([]byte(js), &m); err != nil {
				t.Fatal(err)
			}
			p := Describe(models.OriginClaudePermission, m, markdown.New())
			total := 0
			var tool string
			for _, d := range p.Details {
				total += len(d.Value)
				if d.TestID == "tool-input" {
					tool = d.Value
				}
			}
			if total > MaxRendered+256 {
				t.Errorf("details are %d bytes, over the %d budget", total, MaxRendered)
			}
			if tool == "" {
				t.Fatalf("no tool input detail: %+v", p.Details)
			}
			if depth := strings.Count(tool, "\n"+strings.Repeat("  ", MaxDepth+1)+`"`); name == "deep" && depth != 0 {
				t.Errorf("tool input shown deeper than %d levels", MaxDepth)
			}
			if !p.Cut || !p.PreviewCut || p.QuickApprove() || !p.NeedsReview() {
				t.Errorf("cut=%v previewCut=%v quick=%v review=%v", p.Cut, p.PreviewCut, p.QuickApprove(), p.NeedsReview())
			}
			if name == "wide" && !strings.Contains(tool, "more bytes cut") && !strings.Contains(tool, "output cut") {
				t.Errorf("no cut marker in the wide input")
			}
			if name == "deep" && !strings.Contains(tool, "{… 1 key}") {
				t.Errorf("deep input not summarised at depth %d:\n%s", MaxDepth, tool)
			}
		})
	}
}

func TestBoundedJSONSmallIsWhole(t *testing.T) {
	var v any
	_ = json.Unmarshal([]byte(`{"b":[1,true,null],"a":"<x>"}`), &v)
	got, cut := BoundedJSON(v, MaxRendered)
	want := "{\n  \"a\": \"<x>\",\n  \"b\": [\n    1,\n    true,\n    null\n  ]\n}"
	if got != want || cut {
		t.Errorf("got %q cut=%v, want %q", got, cut, want)
	}
}

// TestListPreview: a short request can be approved from a list; one whose card
// preview is cut cannot.
func TestListPreview(t *testing.T) {
	short := describe(t, models.OriginClaudePermission, `{"tool_name":"Bash","content_preview":"Bash({\"command\":\"ls\"})","tool_input":{"command":"ls"}}`)
	if !short.QuickApprove() || short.NeedsReview() || short.Preview != `Bash({"command":"ls"})` {
		t.Errorf("short: quick=%v review=%v preview=%q", short.QuickApprove(), short.NeedsReview(), short.Preview)
	}
	long := strings.Repeat("x", PreviewLimit+1)
	p := describe(t, models.OriginClaudePermission, `{"tool_name":"Bash","content_preview":"Bash(`+long+`)","tool_input":{"command":"`+long+`"}}`)
	if p.QuickApprove() || !p.NeedsReview() || len([]rune(p.Preview)) != PreviewLimit {
		t.Errorf("long: quick=%v review=%v preview len=%d", p.QuickApprove(), p.NeedsReview(), len([]rune(p.Preview)))
	}
	// Without a content_preview the card shows the tool in its own terms: all of it.
	bare := describe(t, models.OriginClaudePermission, `{"tool_name":"Bash","tool_input":{"command":"ls"}}`)
	if bare.CardTool == nil || bare.CardTool.Command != "ls" || !bare.QuickApprove() {
		t.Errorf("bare Bash: card tool %+v quick=%v", bare.CardTool, bare.QuickApprove())
	}
	// Input beyond the command is listed on the card, so it cannot ride along unseen.
	flag := describe(t, models.OriginClaudePermission, `{"tool_name":"Bash","tool_input":{"command":"ls","dangerouslyDisableSandbox":true}}`)
	if f := flag.CardTool.Fields; len(f) != 1 || f[0].Label != "dangerouslyDisableSandbox" || f[0].Value != "true" {
		t.Errorf("extra input not on the card: %+v", f)
	}
}

func TestVisible(t *testing.T) {
	cases := map[string]string{
		"plain text":             "plain text",
		"rm -rf \u202E/ txt.exe": "rm -rf ⟨U+202E⟩/ txt.exe",
		"a\u2066b\u2069c\u200Ed": "a⟨U+2066⟩b⟨U+2069⟩c⟨U+200E⟩d",
		"zero\u200Bwidth\uFEFF":  "zero⟨U+200B⟩width⟨U+FEFF⟩",
		"emoji 👩\u200D💻 kept":    "emoji 👩\u200D💻 kept",
	}
	for in, want := range cases {
		if got := Visible(in); got != want {
			t.Errorf("Visible(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestURLModeShowsPunycode: a look-alike Unicode host is shown (and linked) in the
// ASCII form the browser resolves, with the Unicode form beside it.
func TestURLModeShowsPunycode(t *testing.T) {
	p := describe(t, models.OriginCodex, `{"mode":"url","url":"https://gіthub.com:8443/login/device"}`) // Cyrillic і
	if !strings.HasPrefix(p.URLHost, "xn--") || !strings.HasSuffix(p.URLHost, ".com:8443") || p.URLHostUnicode != "gіthub.com" || !p.URLSafe {
		t.Fatalf("host=%q unicode=%q safe=%v", p.URLHost, p.URLHostUnicode, p.URLSafe)
	}
	if !strings.HasPrefix(p.URL, "https://"+p.URLHost+"/login/device") {
		t.Errorf("url = %q", p.URL)
	}
	ascii := describe(t, models.OriginCodex, `{"mode":"url","url":"https://github.com/login/device"}`)
	if ascii.URLHost != "github.com" || ascii.URLHostUnicode != "" || ascii.URL != "https://github.com/login/device" {
		t.Errorf("ascii host changed: %+v", ascii)
	}
}

// TestFormFieldsFollowSchemaOrder: with the order recorded at intake, fields appear
// as the server listed them; without it, by name.
func TestFormFieldsFollowSchemaOrder(t *testing.T) {
	schema := `{"type":"object","properties":{"zeta":{"type":"string"},"alpha":{"type":"string"},"mid":{"type":"boolean"}}}`
	order := PropertyOrder([]byte(schema))
	if strings.Join(order, ",") != "zeta,alpha,mid" {
		t.Fatalf("PropertyOrder = %v", order)
	}
	ob, _ := json.Marshal(order)
	names := func(p *Prompt) string {
		var out []string
		for _, f := range p.Fields {
			out = append(out, f.Name)
		}
		return strings.Join(out, ",")
	}
	p := describe(t, models.OriginMCPEvent, `{"requestedSchema":`+schema+`,"property_order":`+string(ob)+`}`)
	if got := names(p); got != "zeta,alpha,mid" {
		t.Errorf("fields = %s, want the schema's order", got)
	}
	// A recorded order naming unknown or repeated properties cannot add or repeat fields.
	p = describe(t, models.OriginMCPEvent, `{"requestedSchema":`+schema+`,"property_order":["mid","ghost","mid"]}`)
	if got := names(p); got != "mid,alpha,zeta" {
		t.Errorf("fields = %s", got)
	}
}
