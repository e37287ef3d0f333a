package slack

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/gatehouse-dev/gatehouse/internal/notify"
)

var fuzzDateToken = regexp.MustCompile(`<!date\^[0-9]+\^\{date_short_pretty\} at \{time\}\|[^<>]*>`)

// FuzzMessageBlocks: whatever an agent sends, every text Slack receives is within
// Block Kit's limits, valid UTF-8, and free of the < and > that would form links and
// mentions (the expiry's date token is Gatehouse's own), and the detail's code block
// stays one block.
func FuzzMessageBlocks(f *testing.F) {
	for _, s := range []string{"", "ls -la", "<!channel> <https://evil|click> & <@U1>", "```\n*x*\n```", "\xff\xfe<", strings.Repeat("&<>`", 1000)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m := &notify.Message{Kind: notify.KindCreated, Prompt: notify.Summary{Title: s, Detail: s, Agent: s, Vendor: s,
			SessionTitle: s, Tool: s, Cwd: s, Answerable: true, ExpiresAt: time.Unix(1796137200, 0)},
			AcceptToken: "a", DeclineToken: "d", ApproveURL: "https://gatehouse.example/approve/s/e"}
		raw, err := json.Marshal(messageBlocks(m))
		if err != nil {
			t.Fatal(err)
		}
		var blocks []any
		if err := json.Unmarshal(raw, &blocks); err != nil {
			t.Fatal(err)
		}
		var walk func(v any)
		walk = func(v any) {
			switch x := v.(type) {
			case map[string]any:
				if text, ok := x["text"].(string); ok {
					if len(text) > maxSectionText || !utf8.ValidString(text) {
						t.Fatalf("text of %d bytes (valid UTF-8: %v)", len(text), utf8.ValidString(text))
					}
					if strings.ContainsAny(fuzzDateToken.ReplaceAllString(text, ""), "<>") {
						t.Fatalf("markup in %q", text)
					}
					if strings.HasPrefix(text, "```\n") && strings.Count(text, "```") != 2 {
						t.Fatalf("code block broken: %q", text)
					}
				}
				for _, c := range x {
					walk(c)
				}
			case []any:
				for _, c := range x {
					walk(c)
				}
			}
		}
		walk(blocks)
		if fb := fallbackText(m); strings.ContainsAny(fb, "<>") || len(fb) > maxFallback {
			t.Fatalf("fallback text %q", fb)
		}
	})
}
