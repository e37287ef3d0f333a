package history

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/auth"
	"github.com/gatehouse-dev/gatehouse/models"
)

// fakeStore holds decided rows newest first and answers DecidedMatching's keyset
// paging as the database does, counting the rows it hands out.
type fakeStore struct {
	rows []models.Elicitation
	read int
}

func (f *fakeStore) ListRootsVisibleTo(context.Context, string) ([]models.Session, error) {
	return nil, nil
}

func (f *fakeStore) DecidedMatching(_ context.Context, q models.DecidedQuery) ([]models.Elicitation, error) {
	var out []models.Elicitation
	for _, r := range f.rows {
		if c := q.Before; c != nil && !(r.ResolvedAt.Before(c.At) || r.ResolvedAt.Equal(c.At) && r.ID < c.ID) {
			continue
		}
		if len(out) == q.Limit {
			break
		}
		out = append(out, r)
	}
	f.read += len(out)
	return out, nil
}

func (f *fakeStore) GetSession(_ context.Context, id string) (*models.Session, error) {
	return &models.Session{ID: id, AgentID: "agent_a"}, nil
}

func (f *fakeStore) GetAgent(context.Context, string) (*models.Agent, error) {
	return &models.Agent{Name: "builder"}, nil
}

// decided makes n accepted Bash prompts, newest first; command names each one.
func decided(n int, command func(i int) string) []models.Elicitation {
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	accept, via := models.ActionAccept, models.ViaPage
	out := make([]models.Elicitation, n)
	for i := range out {
		params, _ := json.Marshal(map[string]any{"tool_name": "Bash", "tool_input": map[string]any{"command": command(i)}})
		at := base.Add(-time.Duration(i) * time.Second)
		out[i] = models.Elicitation{ID: fmt.Sprintf("elicit_%06d", n-i), SessionID: "conv_a", Origin: models.OriginClaudePermission,
			Params: params, Status: models.StatusResolved, Action: &accept, ResolvedVia: &via, ResolvedAt: &at}
	}
	return out
}

// TestTextSearchIsBounded: a search whose only match is deeper than MaxScan reads
// MaxScan rows, says it stopped, and its Next finds the match on the following page.
func TestTextSearchIsBounded(t *testing.T) {
	st := &fakeStore{rows: decided(MaxScan+200, func(i int) string {
		if i == MaxScan+100 {
			return "make DEPLOY"
		}
		return "ls"
	})}
	svc := New(st, &auth.Checker{Mode: auth.ModeNone})
	page, err := svc.List(context.Background(), "local", Filter{Text: "deploy"})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Entries) != 0 || !page.Searched || page.Next == nil || st.read != MaxScan {
		t.Fatalf("first page: %d entries, searched %v, next %v, read %d (want 0, true, set, %d)",
			len(page.Entries), page.Searched, page.Next, st.read, MaxScan)
	}
	page, err = svc.List(context.Background(), "local", Filter{Text: "deploy"}.After(*page.Next))
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Entries) != 1 || page.Entries[0].Summary != "run `make DEPLOY`" || page.Next != nil || page.Searched {
		t.Fatalf("second page: %+v next %v searched %v", page.Entries, page.Next, page.Searched)
	}
}

// TestPagesMeetExactly: paging without a search visits every row once, in order, and
// the last page has no Next.
func TestPagesMeetExactly(t *testing.T) {
	st := &fakeStore{rows: decided(7, func(i int) string { return fmt.Sprintf("echo %d", i) })}
	svc := New(st, &auth.Checker{Mode: auth.ModeNone})
	var seen []string
	f := Filter{Limit: 3}
	for pages := 0; ; pages++ {
		if pages > 3 {
			t.Fatal("paging does not end")
		}
		page, err := svc.List(context.Background(), "local", f)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range page.Entries {
			seen = append(seen, e.Row.ID)
		}
		if page.Next == nil {
			break
		}
		f = f.After(*page.Next)
	}
	if len(seen) != 7 || seen[0] != st.rows[0].ID || seen[6] != st.rows[6].ID {
		t.Fatalf("pages saw %v", seen)
	}
}

// TestCursorRoundTrip: a cursor survives the query string, and junk is refused.
func TestCursorRoundTrip(t *testing.T) {
	c := models.DecidedCursor{At: time.Date(2026, 5, 1, 2, 3, 4, 567891000, time.UTC), ID: "elicit_abc"}
	got, ok := ParseCursor(FormatCursor(c))
	if !ok || !got.At.Equal(c.At) || got.ID != c.ID {
		t.Fatalf("round trip: %v %v", got, ok)
	}
	for _, bad := range []string{"", "abc", "12", "12.", "-5.elicit_a", "x.elicit_a", "12.has space"} {
		if _, ok := ParseCursor(bad); ok {
			t.Errorf("%q parsed", bad)
		}
	}
}
