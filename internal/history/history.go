// Package history answers "what was decided, by whom, through what": the decided
// prompts a person may read, newest decision first, filtered and a page at a time.
//
// It reads through a narrow store interface and applies the same visibility as the
// sessions list and the audit export: a person sees the prompts of the session trees
// they hold at least read access on (every tree for admins and with --auth none).
package history

import (
	"context"
	"strings"

	"github.com/gatehouse-dev/gatehouse/internal/audit"
	"github.com/gatehouse-dev/gatehouse/internal/auth"
	"github.com/gatehouse-dev/gatehouse/internal/prompt"
	"github.com/gatehouse-dev/gatehouse/internal/risk"
	"github.com/gatehouse-dev/gatehouse/models"
)

// MaxScan bounds how many decided prompts one text search reads: a search that finds
// few matches stops there and offers Next to read on, so no request reads the whole
// history.
const MaxScan = 1000

// maxSummary bounds a summary, in characters; the approval page shows the whole request.
const maxSummary = 200

// Store is what the history reads.
type Store interface {
	ListRootsVisibleTo(ctx context.Context, user string) ([]models.Session, error)
	DecidedMatching(ctx context.Context, q models.DecidedQuery) ([]models.Elicitation, error)
	GetSession(ctx context.Context, id string) (*models.Session, error)
	GetAgent(ctx context.Context, id string) (*models.Agent, error)
}

// Service is the history use case.
type Service struct {
	store  Store
	access *auth.Checker
}

// New builds the service.
func New(st Store, access *auth.Checker) *Service { return &Service{store: st, access: access} }

// Entry is one decided prompt as the history shows it.
type Entry struct {
	Row     models.Elicitation
	Session models.Session
	Agent   string
	// Vendor is who asked ("Claude Code"); Tool the tool's name ("" when the prompt is
	// no tool call).
	Vendor, Tool string
	// Summary is what was asked in one line: what the call does ("run `make test`"),
	// else the prompt's message. It is the agent's text, cut but with its controls.
	Summary string
	// Risk is the request's rating (nil when it has none).
	Risk *risk.Assessment
	// Outcome is how it ended, in the filter's words (accept, decline, cancel,
	// resolved, expired, abandoned).
	Outcome string
}

// Page is one page of the history.
type Page struct {
	Entries []Entry
	// Next continues the list (nil: nothing older matches).
	Next *models.DecidedCursor
	// Searched reports that a text search stopped at MaxScan prompts before filling
	// the page: older prompts may still match.
	Searched bool
}

// List reads one page of user's history, narrowed by f.
func (s *Service) List(ctx context.Context, user string, f Filter) (*Page, error) {
	roots, err := s.readableRoots(ctx, user)
	if err != nil {
		return nil, err
	}
	limit := f.Limit
	if limit <= 0 {
		limit = DefaultLimit
	}
	q := models.DecidedQuery{RootIDs: roots, Agent: f.Agent, Risk: f.Risk, Before: f.Before}
	q.Status, q.Action = audit.OutcomeColumns(f.Outcome)
	needle := strings.ToLower(f.Text)
	// Without a text search the store's filters are exact: one more row than the page
	// says whether there is a next one. With one, rows are read in batches and matched
	// here, up to MaxScan.
	batch := limit + 1
	if needle != "" {
		batch = min(MaxScan, 4*limit+1)
	}
	out := &Page{}
	names := newNamer(s.store)
	scanned := 0
	for {
		q.Limit = min(batch, MaxScan-scanned)
		if needle == "" {
			q.Limit = batch
		}
		rows, err := s.store.DecidedMatching(ctx, q)
		if err != nil {
			return nil, err
		}
		for i := range rows {
			row := rows[i]
			scanned++
			if len(out.Entries) == limit {
				// A row beyond a full page: there is more.
				out.Next = cursorOf(&out.Entries[limit-1].Row)
				return out, nil
			}
			e, err := s.entry(ctx, names, row)
			if err != nil {
				return nil, err
			}
			if needle == "" || strings.Contains(strings.ToLower(e.Summary), needle) {
				out.Entries = append(out.Entries, e)
			}
			q.Before = cursorOf(&row)
		}
		if len(rows) < q.Limit {
			return out, nil // nothing older
		}
		if needle != "" && scanned >= MaxScan {
			out.Next, out.Searched = q.Before, len(out.Entries) < limit
			return out, nil
		}
	}
}

// readableRoots is the trees user reads: nil for every tree.
func (s *Service) readableRoots(ctx context.Context, user string) ([]string, error) {
	if s.access.SeesAll(user) {
		return nil, nil
	}
	roots, err := s.store.ListRootsVisibleTo(ctx, user)
	if err != nil {
		return nil, err
	}
	ids := []string{}
	for _, r := range roots {
		lvl, err := s.access.LevelOn(ctx, r.ID, user)
		if err != nil {
			return nil, err
		}
		if lvl >= auth.Read {
			ids = append(ids, r.ID)
		}
	}
	return ids, nil
}

func (s *Service) entry(ctx context.Context, names *namer, row models.Elicitation) (Entry, error) {
	sess, err := s.store.GetSession(ctx, row.SessionID)
	if err != nil {
		return Entry{}, err
	}
	params := row.DecodeParams().All
	sum := prompt.Summarize(row.Origin, params)
	return Entry{Row: row, Session: *sess, Agent: names.agent(ctx, sess.AgentID), Vendor: sum.Vendor, Tool: sum.Tool,
		Summary: oneLine(sum), Risk: sum.Risk, Outcome: OutcomeOf(&row)}, nil
}

// oneLine is a summary's first line of detail, else its message, cut to maxSummary.
func oneLine(sum prompt.Summary) string {
	line := strings.TrimSpace(sum.Detail)
	if i := strings.IndexByte(line, '\n'); i >= 0 {
		line = strings.TrimSpace(line[:i])
	}
	if line == "" {
		line = strings.TrimSpace(sum.Message)
	}
	if r := []rune(line); len(r) > maxSummary {
		line = string(r[:maxSummary-1]) + "…"
	}
	return line
}

// OutcomeOf names how a decided prompt ended, in the filter's words.
func OutcomeOf(row *models.Elicitation) string {
	if row.Status == models.StatusResolved && row.Action != nil {
		switch *row.Action {
		case models.ActionAccept, models.ActionDecline, models.ActionCancel:
			return *row.Action
		}
	}
	return row.Status
}

func cursorOf(row *models.Elicitation) *models.DecidedCursor {
	c := &models.DecidedCursor{ID: row.ID}
	if row.ResolvedAt != nil {
		c.At = *row.ResolvedAt
	}
	return c
}

// namer caches agent names while a page is built.
type namer struct {
	store Store
	names map[string]string
}

func newNamer(st Store) *namer { return &namer{store: st, names: map[string]string{}} }

func (n *namer) agent(ctx context.Context, id string) string {
	if name, ok := n.names[id]; ok {
		return name
	}
	name := ""
	if a, err := n.store.GetAgent(ctx, id); err == nil {
		name = a.Name
	}
	n.names[id] = name
	return name
}
