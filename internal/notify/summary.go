package notify

import (
	"strings"

	"github.com/gatehouse-dev/gatehouse/internal/prompt"
	"github.com/gatehouse-dev/gatehouse/internal/risk"
	"github.com/gatehouse-dev/gatehouse/models"
)

// maxDetail bounds the request text a notification carries; the approval page has all.
const maxDetail = 600

// summarize says what a prompt asks in notification terms (prompt.Summarize): bounded
// plain text with hidden characters made visible, and whether one tap may answer it —
// only when the inbox would let a person approve it from its card (a plain
// approve/reject whose card shows it whole).
func summarize(e *models.Elicitation, sess *models.Session, agent string) Summary {
	params := e.DecodeParams().All
	p := prompt.Summarize(e.Origin, params)
	sum := Summary{SessionID: e.SessionID, ElicitationID: e.ID, SessionTitle: prompt.Visible(sess.Title), Agent: prompt.Visible(agent),
		Vendor: p.Vendor, Origin: e.Origin, Tool: prompt.Visible(p.Tool), Answerable: p.Answerable,
		CreatedAt: e.CreatedAt, ExpiresAt: e.ExpiresAt}
	if cwd, ok := params["cwd"].(string); ok {
		sum.Cwd, _ = prompt.Cut(prompt.Visible(cwd), 300)
	}
	switch {
	case p.Tool != "":
		sum.Title = p.Vendor + " wants to use " + sum.Tool
	default:
		sum.Title, _ = prompt.Cut(prompt.Visible(p.Message), 200)
	}
	sum.Detail, sum.Cut = prompt.Cut(prompt.Visible(p.Detail), maxDetail)
	sum.Cut = sum.Cut || p.Cut
	sum.Risk = p.Risk
	if r := p.Risk; r != nil && r.Level.AtLeast(risk.High) {
		level := strings.ToUpper(string(r.Level[:1])) + string(r.Level[1:])
		sum.Title = level + " risk · " + sum.Title
		var why []string
		for _, reason := range r.Reasons {
			why = append(why, reason.Text)
		}
		sum.Detail = "Risk: " + strings.Join(why, "; ") + "\n" + sum.Detail
	}
	return sum
}
