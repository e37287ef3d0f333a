package slack

import (
	"fmt"
	"strings"
	"time"

	slackapi "github.com/slack-go/slack"

	"github.com/gatehouse-dev/gatehouse/internal/notify"
	"github.com/gatehouse-dev/gatehouse/models"
)

// Action IDs of the message's buttons. Interactions act on the first two only; the
// Open button is a link, whose click Slack reports too (and which is ignored).
const (
	ActionApprove = "gatehouse_approve"
	ActionReject  = "gatehouse_reject"
	ActionOpen    = "gatehouse_open"
)

// blockDecide is the block_id of the actions block.
const blockDecide = "gatehouse_decide"

// Slack's Block Kit limits (characters), with room to spare where text is escaped.
const (
	maxHeader      = 150
	maxSectionText = 3000
	maxField       = 2000
	maxFieldValue  = 300
	maxButtonValue = 2000
	maxURL         = 3000
	maxFallback    = 300
)

// escapeText makes untrusted text inert in Slack mrkdwn: Slack reads <…> as links,
// mentions (<!channel>, <@U…>) and dates, and & as the start of an entity, so those
// three characters are sent as entities (the only escaping Slack defines). Bare URLs
// and @names are not linked because every mrkdwn object built here is verbatim.
func escapeText(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

// escapeCode is escapeText for text inside a code span or block: a run of backticks in
// the text would close the block and let the rest render as formatting, so backticks
// are separated by a zero-width space (they still look like backticks).
func escapeCode(s string) string {
	return strings.ReplaceAll(escapeText(s), "`", "`\u200b")
}

// fit returns the longest prefix of s whose escaped form (esc) is at most max bytes,
// and whether s was shortened. It cuts the raw text, never an entity in the middle.
func fit(s string, max int, esc func(string) string) (string, bool) {
	if e := esc(s); len(e) <= max {
		return e, false
	}
	var b strings.Builder
	for _, r := range s {
		e := esc(string(r))
		if b.Len()+len(e)+len("…") > max {
			break
		}
		b.WriteString(e)
	}
	b.WriteString("…")
	return b.String(), true
}

// plain bounds and escapes text for a plain_text object, on one line. Slack does not
// look for links or mentions in plain_text, but it reads entities in every text, so &, <
// and > are escaped there too (they show as themselves either way).
func plain(s string, max int) string {
	t, _ := fit(strings.Join(strings.Fields(s), " "), max, escapeText)
	return t
}

// mrkdwn is a verbatim mrkdwn text object: verbatim stops Slack from turning bare
// URLs, #channels and @names in the text into links and mentions.
func mrkdwn(text string) *slackapi.TextBlockObject {
	return slackapi.NewTextBlockObject(slackapi.MarkdownType, text, false, true)
}

// plainText is a plain_text object without emoji shortcodes (":x:" in a command stays
// text).
func plainText(text string) *slackapi.TextBlockObject {
	return slackapi.NewTextBlockObject(slackapi.PlainTextType, text, false, false)
}

// requestBlocks renders what is asked: the title, the detail as a code block, who asks
// and where, and when it expires. Every value in it comes from the agent and is
// untrusted.
func requestBlocks(m *notify.Message) []slackapi.Block {
	p := m.Prompt
	title := p.Title
	if title == "" {
		title = "Gatehouse: a request needs an answer"
	}
	blocks := []slackapi.Block{slackapi.NewHeaderBlock(plainText(plain(title, maxHeader)))}
	if m.Kind == notify.KindReminder {
		blocks = append(blocks, slackapi.NewContextBlock("", mrkdwn("*Reminder:* this request is still waiting for an answer.")))
	}
	if strings.TrimSpace(p.Detail) != "" {
		const note = "\n_Shortened: the full request is in Gatehouse._"
		body, cut := fit(p.Detail, maxSectionText-len("```\n\n```")-len(note), escapeCode)
		text := "```\n" + body + "\n```"
		if cut || p.Cut {
			text += note
		}
		blocks = append(blocks, slackapi.NewSectionBlock(mrkdwn(text), nil, nil))
	}
	var fields []*slackapi.TextBlockObject
	for _, f := range []struct{ label, value string }{
		{"Agent", firstOf(p.Agent, p.Vendor)},
		{"Session", firstOf(p.SessionTitle, p.SessionID)},
		{"Tool", p.Tool},
		{"Directory", p.Cwd},
	} {
		if v := strings.Join(strings.Fields(f.value), " "); v != "" {
			val, _ := fit(v, maxFieldValue, escapeCode)
			fields = append(fields, mrkdwn("*"+f.label+"*\n`"+val+"`"))
		}
	}
	if len(fields) > 0 {
		blocks = append(blocks, slackapi.NewSectionBlock(nil, fields, nil))
	}
	if els := contextElements(p); len(els) > 0 {
		blocks = append(blocks, slackapi.NewContextBlock("", els...))
	}
	return blocks
}

// contextElements say who asks (plain text: the vendor name is not trusted either) and
// until when. The expiry uses Slack's date token, which shows the time in the reader's
// own time zone (the fallback is UTC).
func contextElements(p notify.Summary) []slackapi.MixedElement {
	var els []slackapi.MixedElement
	if v := plain(p.Vendor, 100); v != "" {
		els = append(els, plainText(v))
	}
	if !p.ExpiresAt.IsZero() {
		els = append(els, mrkdwn(fmt.Sprintf("Expires <!date^%d^{date_short_pretty} at {time}|%s>",
			p.ExpiresAt.Unix(), p.ExpiresAt.UTC().Format(time.RFC1123))))
	}
	return els
}

// decideBlock holds the buttons: Approve and Reject carry the single-use action tokens
// (only when the prompt can be answered from here), Open links to the approval page.
func decideBlock(m *notify.Message) slackapi.Block {
	var els []slackapi.BlockElement
	if m.Prompt.Answerable && m.AcceptToken != "" && m.DeclineToken != "" &&
		len(m.AcceptToken) <= maxButtonValue && len(m.DeclineToken) <= maxButtonValue {
		els = append(els,
			slackapi.NewButtonBlockElement(ActionApprove, m.AcceptToken, plainText("Approve")).WithStyle(slackapi.StylePrimary),
			slackapi.NewButtonBlockElement(ActionReject, m.DeclineToken, plainText("Reject")).WithStyle(slackapi.StyleDanger))
	}
	if m.ApproveURL != "" && len(m.ApproveURL) <= maxURL {
		els = append(els, slackapi.NewButtonBlockElement(ActionOpen, "", plainText("Open")).WithURL(m.ApproveURL))
	}
	if len(els) == 0 {
		return nil
	}
	return slackapi.NewActionBlock(blockDecide, els...)
}

// outcomeBlock says how the prompt ended, replacing the buttons.
func outcomeBlock(o *notify.Outcome) slackapi.Block {
	text, _ := fit(OutcomeText(o), maxSectionText-4, escapeText)
	return slackapi.NewSectionBlock(mrkdwn("*"+text+"*"), nil, nil)
}

// OutcomeText is the outcome in words: "Approved by alice via slack".
func OutcomeText(o *notify.Outcome) string {
	if o == nil {
		return "Decided"
	}
	switch o.Status {
	case models.StatusExpired:
		return "Expired without an answer"
	case models.StatusAbandoned:
		return "Abandoned: the agent stopped waiting"
	}
	var s string
	switch o.Action {
	case models.ActionAccept:
		s = "Approved"
	case models.ActionDecline:
		s = "Rejected"
	case models.ActionCancel:
		s = "Cancelled"
	default:
		s = "Answered"
	}
	if o.ResolvedBy != "" {
		s += " by " + o.ResolvedBy
	}
	if o.ResolvedVia != "" {
		s += " via " + o.ResolvedVia
	}
	return s
}

// fallbackText is the message's top-level text: what notifications and screen readers
// show. It is escaped like any mrkdwn.
func fallbackText(m *notify.Message) string {
	t := plain(firstOf(m.Prompt.Title, "A request needs an answer"), maxFallback)
	switch {
	case m.Kind == notify.KindReminder:
		t = "Reminder: " + t
	case m.Kind == notify.KindResolved:
		t = escapeText(OutcomeText(m.Outcome)) + ": " + t
	}
	return t
}

// messageBlocks is the whole message for m's kind.
func messageBlocks(m *notify.Message) []slackapi.Block {
	blocks := requestBlocks(m)
	if m.Kind == notify.KindResolved {
		return append(blocks, outcomeBlock(m.Outcome))
	}
	if b := decideBlock(m); b != nil {
		blocks = append(blocks, b)
	}
	return blocks
}

func firstOf(vals ...string) string {
	for _, v := range vals {
		if strings.TrimSpace(v) != "" {
			return v
		}
	}
	return ""
}
