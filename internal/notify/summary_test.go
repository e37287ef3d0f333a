package notify

import (
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/models"
)

// TestSummaryLine: a notification names the tool and says what the call does by its
// kind, with hidden characters made visible and the detail bounded; a call the card
// cannot show whole gets no one-tap answer.
func TestSummaryLine(t *testing.T) {
	sess := &models.Session{Title: "infra"}
	row := func(origin, params string) *models.Elicitation {
		return &models.Elicitation{ID: "elicit_1", SessionID: "conv_1", Origin: origin, Params: []byte(params)}
	}

	s := summarize(row(models.OriginClaudePermission, `{"tool_name":"run_shell_command","tool_kind":"shell","vendor":"Gemini CLI","cwd":"/srv","tool_input":{"command":"terraform apply \u202e"}}`), sess, "main")
	if s.Title != "Gemini CLI wants to use run_shell_command" || s.Detail != "run `terraform apply ⟨U+202E⟩`" || s.Cwd != "/srv" ||
		!s.Answerable || s.Cut || s.SessionTitle != "infra" || s.Agent != "main" {
		t.Errorf("shell: %+v", s)
	}

	long := strings.Repeat("x", 2*maxDetail)
	s = summarize(row(models.OriginClaudePermission, `{"tool_name":"Write","tool_input":{"file_path":"/f","content":"`+long+`"}}`), sess, "")
	if !strings.HasPrefix(s.Detail, "write /f\nxxx") || !strings.Contains(s.Detail, "more bytes cut") || len(s.Detail) > maxDetail+64 || !s.Cut || s.Answerable {
		t.Errorf("long write: cut %v answerable %v detail %d runes", s.Cut, s.Answerable, len([]rune(s.Detail)))
	}

	s = summarize(row(models.OriginMCPEvent, `{"message":"Pick **one** env","requestedSchema":{"type":"object","properties":{"env":{"type":"string"}}}}`), sess, "")
	if s.Title != "Pick one env" || s.Answerable {
		t.Errorf("form: %+v", s)
	}
}
