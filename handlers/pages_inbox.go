package handlers

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"github.com/gatehouse-dev/gatehouse/internal/elicit"
	"github.com/gatehouse-dev/gatehouse/internal/inbox"
	"github.com/gatehouse-dev/gatehouse/internal/prompt"
	"github.com/gatehouse-dev/gatehouse/internal/stream"
	"github.com/gatehouse-dev/gatehouse/models"
	"github.com/gatehouse-dev/gatehouse/views"
)

// summaryLimit bounds the preview a card shows, in characters.
const summaryLimit = 300

// showInbox renders every prompt the user may decide, grouped by root session.
func (s *Server) showInbox(c echo.Context) error {
	d, err := s.inboxData(c)
	if err != nil {
		return err
	}
	d.Chrome = s.chrome(c, views.CountTitle(d.Count), "inbox")
	return s.render(c, http.StatusOK, views.Inbox(d))
}

// inboxEvents streams the inbox list: once at connect (so nothing that happened
// between the page load and the stream is missed), then again when a prompt is opened
// or decided in one of the trees the list shows, or the user's grants change — paced,
// and only if the list changed. Events elsewhere on the server never reach it.
func (s *Server) inboxEvents(c echo.Context) error {
	ctx := c.Request().Context()
	// The lease watches the user's grants before Follow reads them, so a tree granted
	// in between is not missed.
	lease, err := s.streams.Acquire(userOf(c), "")
	if err != nil {
		return err
	}
	defer lease.Release()
	follow, err := s.inbox.Follow(ctx, userOf(c), s.bus, streamBuffer)
	if err != nil {
		return err
	}
	defer follow.Cancel()
	s.csrfToken(c) // mint before the stream starts: the cards' forms carry it
	sw := s.startSSE(c)
	feed := liveFeed{events: follow.C, grants: lease.Changed(), regrant: follow.Refresh}
	return pushFragments(ctx, sw, feed, "inbox", func() (views.InboxPage, error) { return s.inboxData(c) },
		func(d views.InboxPage) templ.Component { return views.InboxList(d) })
}

// decideFromList takes the inline approve/reject of a card (inbox or session page).
// Only prompts with nothing to fill in can be approved from a list. htmx gets an empty
// body (the card disappears) plus an out-of-band flash when someone else was first;
// without JavaScript the browser is redirected back to the list.
func (s *Server) decideFromList(c echo.Context) error {
	sess, err := s.decisionSession(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	eid := c.Param("eid")
	row, err := s.ownedRow(c, sess.ID, eid)
	if err != nil {
		return err
	}
	var r elicit.Result
	switch c.FormValue(prompt.FieldAction) {
	case elicit.ActionAccept:
		var params map[string]any
		_ = json.Unmarshal(row.Params, &params)
		if !prompt.Describe(row.Origin, params, s.md).QuickApprove() {
			return bad("action", "this request needs answers: open it to approve")
		}
		r.Action = elicit.ActionAccept
	case elicit.ActionDecline:
		r.Action = elicit.ActionDecline
	default:
		return bad("action", "choose approve or reject")
	}
	out, err := s.elicit.Resolve(ctx, sess.ID, eid, r, userOf(c), models.ViaInbox)
	if err != nil {
		return err
	}
	s.log.Info("decided from list", "session_id", sess.ID, "elicitation_id", eid, "action", r.Action,
		"outcome", out.Outcome, "resolved_by", userOf(c))
	msg := ""
	if out.Outcome == elicit.OutcomeAlreadyResolved {
		msg = "That request was already decided by " + out.ResolvedBy + "; your answer was not used."
	}
	if isHTMX(c) {
		if msg == "" {
			return c.HTML(http.StatusOK, "")
		}
		return s.render(c, http.StatusOK, views.FlashOOB(msg))
	}
	if msg != "" {
		s.setFlash(c, msg)
	}
	return s.redirect(c, safeNext(c.FormValue("next")))
}

// safeNext keeps a post-decision redirect on our own list pages.
func safeNext(next string) string {
	if next == "/inbox" || (strings.HasPrefix(next, "/sessions/") && !strings.ContainsAny(next[len("/sessions/"):], "/\\?#:")) {
		return next
	}
	return "/inbox"
}

// inboxData builds the inbox for the signed-in user.
func (s *Server) inboxData(c echo.Context) (views.InboxPage, error) {
	box, err := s.inbox.Pending(c.Request().Context(), userOf(c))
	if err != nil {
		return views.InboxPage{}, err
	}
	d := views.InboxPage{CSRF: s.csrfToken(c), Count: box.Count}
	for _, g := range box.Groups {
		vg := views.InboxGroup{Root: crumb(&g.Root), Agent: g.Agent}
		for _, it := range g.Items {
			vg.Cards = append(vg.Cards, s.card(it, true, "/inbox", 1))
		}
		d.Groups = append(d.Groups, vg)
	}
	return d, nil
}

// card turns a pending prompt into a list card. ownerFrom is how many leading
// sessions of the prompt's path the list already shows (the group's root).
func (s *Server) card(it inbox.Item, canDecide bool, next string, ownerFrom int) views.Card {
	p := prompt.Describe(it.Row.Origin, it.Params, s.md)
	c := views.Card{
		ID: it.Row.ID, ApproveURL: approvePath(it.Row.SessionID, it.Row.ID),
		DecideURL: "/inbox/" + it.Row.SessionID + "/" + it.Row.ID, Next: next,
		Message: p.Message, Vendor: p.Vendor, Policy: p.Policy, Created: it.Row.CreatedAt,
		Summary: summary(it.Params), QuickApprove: p.QuickApprove(), CanDecide: canDecide,
	}
	if len(it.Path) > ownerFrom {
		c.Owner = crumbs(it.Path[ownerFrom:])
	}
	return c
}

// summary is a short plain-text preview of a prompt for cards: the plan's text, the
// questions, or the request's preview.
func summary(params map[string]any) string {
	var s string
	if plan, ok := params["exit_plan_mode"].(map[string]any); ok {
		s, _ = plan["plan"].(string)
	}
	if auq, ok := params["ask_user_question"].(map[string]any); ok && s == "" {
		qs, _ := auq["questions"].([]any)
		var lines []string
		for _, q := range qs {
			if m, ok := q.(map[string]any); ok {
				if text, _ := m["question"].(string); text != "" {
					lines = append(lines, text)
				}
			}
		}
		s = strings.Join(lines, "\n")
	}
	if s == "" {
		s, _ = params["content_preview"].(string)
	}
	if s == "" {
		s, _ = params["command"].(string)
	}
	s = strings.TrimSpace(s)
	if utf8.RuneCountInString(s) > summaryLimit {
		s = string([]rune(s)[:summaryLimit-1]) + "…"
	}
	return s
}

// liveFeed is what a live page listens to: prompt events, and notes that the viewer's
// grants changed, on which regrant runs first (re-checking access: an error ends the
// stream at once; or re-reading which trees to follow).
type liveFeed struct {
	events  <-chan stream.Delivery
	grants  <-chan struct{}
	regrant func(ctx context.Context) error
}

// pushFragments sends a live page's fragment at once, then again after prompt events
// or grant changes, skipping sends that would not change the page. Renders are paced
// (stream.Pacer): a burst of events costs a bounded number of renders, not one each.
func pushFragments[T any](ctx context.Context, sw *sseWriter, feed liveFeed, name string,
	load func() (T, error), view func(T) templ.Component) error {
	var last [32]byte
	send := func() error {
		d, err := load()
		if err != nil {
			return err
		}
		var buf strings.Builder
		if err := view(d).Render(ctx, &buf); err != nil {
			return err
		}
		sum := sha256.Sum256([]byte(buf.String()))
		if sum == last {
			return nil
		}
		last = sum
		return sw.event(name, buf.String())
	}
	pace := stream.NewPacer(stream.RenderEvery)
	defer pace.Stop()
	if err := send(); err != nil {
		return nil
	}
	pace.Rendered(time.Now())
	tick := time.NewTicker(heartbeatEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case d, ok := <-feed.events:
			if !ok {
				return nil // dropped for falling behind; EventSource reconnects
			}
			if relevant(d) {
				pace.Note()
			}
		case <-feed.grants:
			if err := feed.regrant(ctx); err != nil {
				return nil // access is gone (or unknown): nothing more is sent
			}
			pace.Note()
		case <-pace.C():
		case <-tick.C:
			if err := sw.ping(); err != nil {
				return nil
			}
		}
		if pace.Due(time.Now()) {
			drain(feed.events) // what is already queued is covered by this render
			if err := send(); err != nil {
				return nil
			}
		}
	}
}

func relevant(d stream.Delivery) bool {
	return d.Event.Type == elicit.EventRequest || d.Event.Type == elicit.EventResolved
}

// drain takes what is already queued (at most one buffer's worth, so a flood cannot
// hold the stream here), so a burst renders once.
func drain(events <-chan stream.Delivery) {
	for range streamBuffer {
		select {
		case _, ok := <-events:
			if !ok {
				return
			}
		default:
			return
		}
	}
}
