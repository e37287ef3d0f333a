package views

import (
	"strconv"
	"strings"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/prompt"
)

// Headline is the one-line result of an outcome.
func (o Outcome) Headline() string {
	switch o.Status {
	case "resolved":
		switch o.Action {
		case "accept":
			return "Approved"
		case "decline":
			return "Rejected"
		case "cancel":
			return "Cancelled"
		}
		return "Resolved"
	case "expired":
		return "Expired — nobody answered in time"
	case "abandoned":
		return "Abandoned — the agent stopped waiting"
	}
	return "Decided"
}

// Tone is the CSS modifier for an outcome's colour.
func (o Outcome) Tone() string {
	if o.Status == "resolved" && o.Action == "accept" {
		return "ok"
	}
	if o.Status == "resolved" && o.Action == "decline" {
		return "bad"
	}
	return "neutral"
}

// ViaText names the channel a verdict arrived through, for people.
func (o Outcome) ViaText() string {
	switch o.Via {
	case "page":
		return "the approval page"
	case "inbox":
		return "inbox"
	case "api":
		return "the API"
	case "event":
		return "an approval event"
	case "timeout":
		return "timeout"
	case "disconnect":
		return "disconnect"
	case "shutdown":
		return "server shutdown"
	case "mcp_client":
		return "the MCP client"
	case "rule":
		return "Gatehouse rule " + o.RuleID
	case "push", "ntfy", "slack", "webhook":
		return channelLabel(o.Via)
	}
	return o.Via
}

// dayClock is a time with its day, in UTC ("3 Dec 02:10"): what a page shows before
// app.js rewrites it in the viewer's time zone (time[data-local]).
func dayClock(t time.Time) string { return t.UTC().Format("2 Jan 15:04") }

// relative is how far t is from now in a word or two: "in 23 h", "5 min ago", "in 3 d".
// A date alone makes a person do the sum; next to it this says at a glance whether a
// rule is about to lapse or fired a moment ago.
func relative(t, now time.Time) string {
	d := t.Sub(now)
	past := d < 0
	if past {
		d = -d
	}
	var n string
	switch {
	case d < time.Minute:
		if past {
			return "just now"
		}
		return "in under a minute"
	case d < time.Hour:
		n = strconv.Itoa(int(d/time.Minute)) + " min"
	case d < 48*time.Hour:
		n = strconv.Itoa(int(d/time.Hour)) + " h"
	default:
		n = strconv.Itoa(int(d/(24*time.Hour))) + " d"
	}
	if past {
		return n + " ago"
	}
	return "in " + n
}

// stamp is the machine-readable time for <time datetime>.
func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// longStamp is a human full date for tooltips.
func longStamp(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05 UTC") }

func itoa(n int) string { return strconv.Itoa(n) }

// visible shows the bidi and zero-width controls of untrusted text as markers, so
// what the page displays reads in the order it runs (see prompt.Visible).
func visible(s string) string { return prompt.Visible(s) }

// titleOr returns a session's title, or a short form of its id when it has none.
// Titles are agent-supplied: long ones are cut and controls made visible.
func titleOr(c Crumb) string {
	if c.Title != "" {
		t, _ := prompt.Cut(c.Title, 200)
		return visible(t)
	}
	id := c.ID
	if len(id) > 13 {
		id = id[:13] + "…"
	}
	return "Untitled session " + id
}

// CountTitle is the tab title of the inbox, with the pending count up front so it
// shows in a crowded tab bar.
func CountTitle(n int) string {
	if n == 0 {
		return "Inbox"
	}
	return "(" + strconv.Itoa(n) + ") Inbox"
}

// depthStyle indents a tree node; the value is a fixed CSS class, never user text.
func depthClass(d int) string {
	if d > 8 {
		d = 8
	}
	return "depth-" + strconv.Itoa(d)
}

// describedBy lists the ids of a field's description, hint and error for
// aria-describedby.
func describedBy(f prompt.Field) string {
	var ids []string
	if f.Description != "" {
		ids = append(ids, f.ID()+"-desc")
	}
	if f.Hint != "" && f.Error == "" {
		ids = append(ids, f.ID()+"-hint")
	}
	if f.Error != "" {
		ids = append(ids, f.ID()+"-err")
	}
	return strings.Join(ids, " ")
}

// shortHeadline is an outcome in one or two words, for tables.
func shortHeadline(o Outcome) string {
	switch o.Status {
	case "expired":
		return "Expired"
	case "abandoned":
		return "Abandoned"
	}
	return o.Headline()
}

// ownerLine names the sub-agent sessions below a list's own level, "child › grandchild".
func ownerLine(path []Crumb) string {
	names := make([]string, len(path))
	for i, c := range path {
		names[i] = titleOr(c)
	}
	return strings.Join(names, " › ")
}

// ruleText writes a permission rule as Claude Code does: Tool(content), or the bare
// tool name for a rule that covers every use.
func ruleText(r prompt.SuggestionRule) string {
	if r.Broad {
		return r.Tool
	}
	return r.Tool + "(" + r.Content + ")"
}

func itoa64(n int64) string { return strconv.FormatInt(n, 10) }

// effectTone is the pill colour of a rule effect.
func effectTone(effect string) string {
	switch effect {
	case "allow":
		return "ok"
	case "deny":
		return "bad"
	}
	return "neutral"
}

// remaining says how long a pending prompt still waits, for people ("4 min left").
func remaining(until, now time.Time) string {
	d := until.Sub(now)
	switch {
	case d <= 0:
		return "time is up"
	case d < time.Minute:
		return strconv.Itoa(int(d.Seconds())) + " s left"
	case d < time.Hour:
		return strconv.Itoa(int(d.Minutes())) + " min left"
	}
	return strconv.Itoa(int(d.Hours())) + " h " + strconv.Itoa(int(d.Minutes())%60) + " min left"
}

// timeoutText says what happens when a rule's wait runs out.
func timeoutText(onTimeout string) string {
	switch onTimeout {
	case "deny":
		return "the request is denied, as a timeout"
	case "allow":
		return "the request is allowed, as a timeout"
	}
	return "no decision (a timeout; nobody declined)"
}
