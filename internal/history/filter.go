package history

import (
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gatehouse-dev/gatehouse/internal/audit"
	"github.com/gatehouse-dev/gatehouse/internal/errs"
	"github.com/gatehouse-dev/gatehouse/internal/risk"
	"github.com/gatehouse-dev/gatehouse/models"
)

// Filter narrows the history: every set field must match. It travels as the query
// parameters of /history and /v1/history, so a filtered list can be bookmarked and
// its Next link keeps the filter.
type Filter struct {
	// Outcome is how the prompt ended, in the audit export's words: accept, decline,
	// cancel, resolved (any verdict), expired or abandoned.
	Outcome string
	// Agent is an agent's id or name.
	Agent string
	// Risk is a risk level (low, medium, high, critical).
	Risk string
	// Text keeps prompts whose summary contains it, ignoring case.
	Text string
	// Before continues the list after this position (the previous page's Next).
	Before *models.DecidedCursor
	// Limit is the most prompts a page lists (DefaultLimit when 0).
	Limit int
}

// Filter parameter names.
const (
	ParamOutcome = "outcome"
	ParamAgent   = "agent"
	ParamRisk    = "risk"
	ParamText    = "q"
	ParamBefore  = "before"
	ParamLimit   = "limit"
)

// Bounds of a page and of its filters.
const (
	DefaultLimit = 50
	MaxLimit     = 200
	// MaxTextLen bounds the text searched for.
	MaxTextLen  = 200
	maxValueLen = 200
)

// ParseFilter reads a Filter from query values. A value that cannot be a filter is an
// InvalidInput error (400) naming its parameter.
func ParseFilter(get func(string) string) (Filter, error) {
	var f Filter
	text := func(name string, max int) (string, error) {
		v := strings.TrimSpace(get(name))
		if utf8.RuneCountInString(v) > max || !utf8.ValidString(v) || strings.ContainsRune(v, 0) {
			return "", errs.Invalid(name, "must be at most %d characters of text", max)
		}
		return v, nil
	}
	var err error
	if f.Agent, err = text(ParamAgent, maxValueLen); err != nil {
		return Filter{}, err
	}
	if f.Text, err = text(ParamText, MaxTextLen); err != nil {
		return Filter{}, err
	}
	f.Outcome = strings.TrimSpace(get(ParamOutcome))
	if st, _ := audit.OutcomeColumns(f.Outcome); f.Outcome != "" && st == "" {
		return Filter{}, errs.Invalid(ParamOutcome, "must be one of accept, decline, cancel, resolved, expired, abandoned")
	}
	f.Risk = strings.TrimSpace(get(ParamRisk))
	switch risk.Level(f.Risk) {
	case "", risk.Low, risk.Medium, risk.High, risk.Critical:
	default:
		return Filter{}, errs.Invalid(ParamRisk, "must be one of low, medium, high, critical")
	}
	if v := strings.TrimSpace(get(ParamBefore)); v != "" {
		c, ok := ParseCursor(v)
		if !ok {
			return Filter{}, errs.Invalid(ParamBefore, "must be the next value of a previous page")
		}
		f.Before = &c
	}
	if v := strings.TrimSpace(get(ParamLimit)); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > MaxLimit {
			return Filter{}, errs.Invalid(ParamLimit, "must be a whole number from 1 to %d", MaxLimit)
		}
		f.Limit = n
	}
	return f, nil
}

// Narrowed reports whether any filter other than paging is set.
func (f Filter) Narrowed() bool {
	return f.Outcome != "" || f.Agent != "" || f.Risk != "" || f.Text != ""
}

// Values encodes f as query parameters (only the set ones).
func (f Filter) Values() url.Values {
	v := url.Values{}
	set := func(k, s string) {
		if s != "" {
			v.Set(k, s)
		}
	}
	set(ParamOutcome, f.Outcome)
	set(ParamAgent, f.Agent)
	set(ParamRisk, f.Risk)
	set(ParamText, f.Text)
	if f.Before != nil {
		set(ParamBefore, FormatCursor(*f.Before))
	}
	if f.Limit > 0 && f.Limit != DefaultLimit {
		set(ParamLimit, strconv.Itoa(f.Limit))
	}
	return v
}

// After is f continued at cursor c: the filter of the next page.
func (f Filter) After(c models.DecidedCursor) Filter {
	f.Before = &c
	return f
}

// FormatCursor writes a cursor as the before parameter carries it: the decision time
// in Unix nanoseconds, a dot, and the prompt's id.
func FormatCursor(c models.DecidedCursor) string {
	return strconv.FormatInt(c.At.UnixNano(), 10) + "." + c.ID
}

// ParseCursor reads FormatCursor's form; ok is false for anything else.
func ParseCursor(s string) (models.DecidedCursor, bool) {
	ns, id, found := strings.Cut(s, ".")
	if !found || id == "" || len(id) > 100 || strings.ContainsFunc(id, func(r rune) bool { return r <= ' ' || r > '~' }) {
		return models.DecidedCursor{}, false
	}
	n, err := strconv.ParseInt(ns, 10, 64)
	if err != nil || n <= 0 {
		return models.DecidedCursor{}, false
	}
	return models.DecidedCursor{At: time.Unix(0, n).UTC(), ID: id}, true
}
