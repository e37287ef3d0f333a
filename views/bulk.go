package views

import "strings"

// InboxFilter is the inbox's active filter as the page shows and re-sends it.
type InboxFilter struct {
	Agent, Session, Tool, OlderThan string
	// Query is the filter as a query string ("?tool=Bash…"), "" when none is set.
	Query string
}

// Active reports whether any filter is set.
func (f InboxFilter) Active() bool { return f.Query != "" }

// BulkResult counts what one bulk answer did.
type BulkResult struct {
	// Action is "accept" or "decline".
	Action         string
	Decided        int
	AlreadyDecided int
	NeedsReview    int
	NeedsAnswers   int
	Risky          int
	NotFound       int
}

// Summary says in a sentence or two what a bulk answer did and what it left alone.
func (r BulkResult) Summary() string {
	verb := "Rejected"
	if r.Action == "accept" {
		verb = "Approved"
	}
	parts := []string{verb + " " + requests(r.Decided) + "."}
	if r.AlreadyDecided > 0 {
		parts = append(parts, were(r.AlreadyDecided)+" already decided elsewhere; left as decided.")
	}
	if r.NeedsReview > 0 {
		parts = append(parts, "Skipped "+requests(r.NeedsReview)+" that need review: open each to see it whole before approving.")
	}
	if r.Risky > 0 {
		parts = append(parts, "Skipped "+requests(r.Risky)+" of high or critical risk: open each to approve it on its page.")
	}
	if r.NeedsAnswers > 0 {
		parts = append(parts, "Skipped "+requests(r.NeedsAnswers)+" that need answers: open each to answer.")
	}
	if r.NotFound > 0 {
		parts = append(parts, were(r.NotFound)+" not found.")
	}
	return strings.Join(parts, " ")
}

func requests(n int) string {
	if n == 1 {
		return "1 request"
	}
	return itoa(n) + " requests"
}

func were(n int) string {
	if n == 1 {
		return "1 request was"
	}
	return itoa(n) + " requests were"
}
