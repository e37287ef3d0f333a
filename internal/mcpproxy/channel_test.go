package mcpproxy

import (
	"encoding/json"
	"testing"

	"github.com/gatehouse-dev/gatehouse/internal/adapters/mcp"
)

// TestChannelFor pins how each kind of client is asked: input_required only for
// 2026-07-28 (and the bare client), in a mode it declared; -32042 only for older
// clients that declared URL mode; a held call for the rest; -32021 when nothing fits.
func TestChannelFor(t *testing.T) {
	urlOnly := &mcp.Elicitation{URL: true}
	formOnly := &mcp.Elicitation{Form: true}
	both := &mcp.Elicitation{Form: true, URL: true}
	none := &mcp.Elicitation{}
	cases := []struct {
		name string
		mode string
		c    mcp.Client
		want channel
	}{
		{"bare client, url mode", mcp.ModeURL, mcp.Client{}, askInputURL},
		{"bare client, form mode", mcp.ModeForm, mcp.Client{}, askInputForm},
		{"2026-07-28 with both, url mode", mcp.ModeURL, mcp.Client{Version: "2026-07-28", Elicitation: both}, askInputURL},
		{"2026-07-28 with both, form mode", mcp.ModeForm, mcp.Client{Version: "2026-07-28", Elicitation: both}, askInputForm},
		{"2026-07-28 form only, url mode", mcp.ModeURL, mcp.Client{Version: "2026-07-28", Elicitation: formOnly}, askInputForm},
		{"2026-07-28 url only, form mode", mcp.ModeForm, mcp.Client{Version: "2026-07-28", Elicitation: urlOnly}, askInputURL},
		{"2026-07-28 declared none", mcp.ModeURL, mcp.Client{Version: "2026-07-28", Elicitation: none}, askMissing},
		{"2026-07-28 said nothing", mcp.ModeURL, mcp.Client{Version: "2026-07-28"}, askInputURL},
		{"2025-11-25 with url", mcp.ModeForm, mcp.Client{Version: "2025-11-25", Elicitation: both}, askURLError},
		{"2025-06-18 url only", mcp.ModeURL, mcp.Client{Version: "2025-06-18", Elicitation: urlOnly}, askURLError},
		{"2025-11-25 form only (older Claude Code)", mcp.ModeURL, mcp.Client{Version: "2025-11-25", Elicitation: formOnly}, askHold},
		{"2025-03-26 without elicitation", mcp.ModeURL, mcp.Client{Version: "2025-03-26"}, askHold},
	}
	for _, tc := range cases {
		p := &Proxy{o: Options{Mode: tc.mode}}
		if got := p.channelFor(tc.c); got != tc.want {
			t.Errorf("%s: channel %d, want %d", tc.name, got, tc.want)
		}
	}
}

// TestDeclineReason reads the reason from each place a decline may carry it.
func TestDeclineReason(t *testing.T) {
	for raw, want := range map[string]string{
		`{"feedback":" not on a Friday "}`: "not on a Friday",
		`{"reason":"too risky"}`:           "too risky",
		`{"message":"use staging"}`:        "use staging",
		`{"feedback":""}`:                  "",
		`null`:                             "",
		`{"feedback":7}`:                   "",
	} {
		if got := declineReason(json.RawMessage(raw)); got != want {
			t.Errorf("%s → %q, want %q", raw, got, want)
		}
	}
}
