package prompt

import (
	"strings"
	"unicode/utf8"
)

// PreviewLimit bounds the preview a list card shows, in characters.
const PreviewLimit = 300

// cardPreview is a short plain-text preview of a prompt for list cards — the plan's
// text, the questions, or the request's preview — and whether it shows less than the
// request holds: cut here, or a tool input the card does not show at all.
func cardPreview(params map[string]any) (string, bool) {
	var s string
	if plan, ok := params["exit_plan_mode"].(map[string]any); ok {
		s = str(plan["plan"])
	}
	if s == "" {
		var lines []string
		for _, q := range questionList(params) {
			if text := str(mapOf(q)["question"]); text != "" {
				lines = append(lines, text)
			}
		}
		s = strings.Join(lines, "\n")
	}
	if s == "" {
		s = str(params["content_preview"])
	}
	if s == "" {
		s = str(params["command"])
	}
	s = strings.TrimSpace(s)
	// Adapters cut content_preview (at 1024 characters) far above PreviewLimit, so a
	// preview they cut is always cut here too.
	cut := s == "" && len(mapOf(params["tool_input"])) > 0
	if utf8.RuneCountInString(s) > PreviewLimit {
		s = string([]rune(s)[:PreviewLimit-1]) + "…"
		cut = true
	}
	return s, cut
}
