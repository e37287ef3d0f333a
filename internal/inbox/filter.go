package inbox

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/errs"
	"github.com/gatehouse-dev/gatehouse/models"
)

// Filter narrows the inbox: every set field must match. It travels as the query
// parameters of /inbox (agent, session, tool, older_than), so a filtered list can be
// bookmarked and its live stream and bulk answers keep the same filter.
type Filter struct {
	// Agent is an agent's id or name.
	Agent string
	// Session is a session id: its prompts and its sub-agents'.
	Session string
	// Tool is the tool a prompt asks for (Bash, Edit, …), exactly.
	Tool string
	// OlderThan keeps prompts that have waited at least this long.
	OlderThan time.Duration
}

// Filter parameter names.
const (
	ParamAgent     = "agent"
	ParamSession   = "session"
	ParamTool      = "tool"
	ParamOlderThan = "older_than"
)

// maxFilterLen bounds one filter value; nothing we match on is longer.
const maxFilterLen = 200

// ParseFilter reads a Filter from query or form values. A value that cannot be a
// filter is an InvalidInput error (400) naming its parameter.
func ParseFilter(get func(string) string) (Filter, error) {
	var f Filter
	for _, p := range []struct {
		name string
		to   *string
	}{{ParamAgent, &f.Agent}, {ParamSession, &f.Session}, {ParamTool, &f.Tool}} {
		v := strings.TrimSpace(get(p.name))
		if len(v) > maxFilterLen || strings.ContainsRune(v, 0) {
			return Filter{}, errs.Invalid(p.name, "must be at most %d characters of text", maxFilterLen)
		}
		*p.to = v
	}
	if v := strings.TrimSpace(get(ParamOlderThan)); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			return Filter{}, errs.Invalid(ParamOlderThan, "must be a duration such as 30s, 5m or 2h")
		}
		f.OlderThan = d
	}
	return f, nil
}

// IsZero reports whether f lists everything.
func (f Filter) IsZero() bool { return f == Filter{} }

// Values encodes f as query parameters (only the set ones).
func (f Filter) Values() url.Values {
	v := url.Values{}
	set := func(k, s string) {
		if s != "" {
			v.Set(k, s)
		}
	}
	set(ParamAgent, f.Agent)
	set(ParamSession, f.Session)
	set(ParamTool, f.Tool)
	if f.OlderThan > 0 {
		set(ParamOlderThan, f.OlderThan.String())
	}
	return v
}

// Query is f as a query string with its leading "?", or "" for the zero Filter.
func (f Filter) Query() string {
	if q := f.Values().Encode(); q != "" {
		return "?" + q
	}
	return ""
}

// query turns f into the store query over the trees in roots; ok is false when
// nothing can match (a session filter naming a session outside those trees).
func (s *Service) query(ctx context.Context, roots []string, f Filter) (models.PendingQuery, bool, error) {
	q := models.PendingQuery{RootIDs: roots, Agent: f.Agent, Tool: f.Tool, Limit: MaxPending}
	if f.OlderThan > 0 {
		q.CreatedBefore = s.now().Add(-f.OlderThan)
	}
	if f.Session != "" {
		sess, err := s.store.GetSession(ctx, f.Session)
		if errors.Is(err, errs.ErrNotFound) {
			return q, false, nil
		}
		if err != nil {
			return q, false, err
		}
		q.SessionPath = sess.Path
	}
	return q, true, nil
}
