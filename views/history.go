package views

import "github.com/gatehouse-dev/gatehouse/internal/risk"

// HistoryPage lists decided prompts, newest decision first.
type HistoryPage struct {
	Chrome Chrome
	Filter HistoryFilter
	Rows   []HistoryRow
	// NextURL continues the list ("" on the last page); Searched says a text search
	// stopped reading before it filled the page.
	NextURL  string
	Searched bool
	// ExportURL downloads the audit trail the history is drawn from.
	ExportURL string
}

// HistoryFilter is the filter form's values, as given.
type HistoryFilter struct {
	Outcome, Agent, Risk, Text string
}

// Active reports whether the list is narrowed.
func (f HistoryFilter) Active() bool { return f != HistoryFilter{} }

// HistoryRow is one decided prompt.
type HistoryRow struct {
	ID         string
	ApproveURL string
	Vendor     string
	// Summary is what was asked, in one line (agent text).
	Summary string
	Agent   string
	Session Crumb
	Risk    *risk.Assessment
	Outcome Outcome
}

// historyOutcomes are the outcome filter's choices: value and label.
var historyOutcomes = [][2]string{
	{"", "Any"}, {"accept", "Approved"}, {"decline", "Rejected"}, {"cancel", "Cancelled"},
	{"expired", "Expired"}, {"abandoned", "Abandoned"},
}

// historyRisks are the risk filter's choices.
var historyRisks = [][2]string{
	{"", "Any"}, {"low", "Low"}, {"medium", "Medium"}, {"high", "High"}, {"critical", "Critical"},
}

// outcomeWord is how a prompt ended in the filter's words (accept, decline, cancel,
// expired, abandoned), for tests and scripts reading the page.
func outcomeWord(o Outcome) string {
	if o.Status == "resolved" && o.Action != "" {
		return o.Action
	}
	return o.Status
}
