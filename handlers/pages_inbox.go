package handlers

import (
	"context"
	"crypto/sha256"
	"net/http"
	"strings"
	"time"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"github.com/gatehouse-dev/gatehouse/internal/elicit"
	"github.com/gatehouse-dev/gatehouse/internal/inbox"
	"github.com/gatehouse-dev/gatehouse/internal/prompt"
	"github.com/gatehouse-dev/gatehouse/internal/stream"
	"github.com/gatehouse-dev/gatehouse/models"
	"github.com/gatehouse-dev/gatehouse/views"
)

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
	// The lease watches the user's grants before Follow reads them, so a tree granted
	// in between is not missed.
	access, err := s.openStream(c, "", nil)
	if err != nil {
		return err
	}
	defer access.Release()
	ctx := access.Context() // ends at shutdown too: the stream closes, its client reconnects
	follow, err := s.inbox.Follow(ctx, userOf(c), s.bus, streamBuffer)
	if err != nil {
		return err
	}
	defer follow.Cancel()
	s.csrfToken(c) // mint before the stream starts: the cards' forms carry it
	sw := s.startSSE(c)
	feed := liveFeed{events: follow.C, grants: access.Changed(), now: s.elicit.Now, recheck: access.Recheck,
		regrant: func(ctx context.Context) error {
			if err := access.Recheck(ctx); err != nil {
				return err
			}
			_, err := follow.Refresh(ctx)
			return err
		}}
	return pushFragments(ctx, sw, feed, "inbox", func() (views.InboxPage, error) { return s.inboxData(c) },
		func(d views.InboxPage) templ.Component { return views.InboxList(d) })
}

// decideFromList takes the inline approve/reject of a card (inbox or session page).
// Only prompts with nothing to fill in can be approved from a list, and only when the
// card shows the whole request: a shortened one must be opened and approved on its
// page, so the server refuses it here whatever the client sends (htmx gets the card
// back with the reason; without JavaScript the browser is sent to the page). htmx gets
// an empty body (the card disappears) plus an out-of-band flash when someone else was
// first; without JavaScript the browser is redirected back to the list.
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
	var r models.Verdict
	switch c.FormValue(prompt.FieldAction) {
	case models.ActionAccept:
		params := row.DecodeParams().All
		p := prompt.Describe(row.Origin, params, s.md)
		if p.NeedsReview() {
			return s.refuseFromList(c, sess, row, params)
		}
		if !p.QuickApprove() {
			return bad("action", "this request needs answers: open it to approve")
		}
		r.Action = models.ActionAccept
	case models.ActionDecline:
		r.Action = models.ActionDecline
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

// answerSelected takes the inbox's bulk form: one approve or reject (with one reason)
// for every selected prompt. Each prompt is decided on its own — first verdict wins —
// and the answer reports how many were decided, were already decided (a stale
// selection) or were skipped because they must be opened first. It never creates a
// rule. htmx gets the report and the refreshed list; without JavaScript the report is
// a flash on the (still filtered) inbox.
func (s *Server) answerSelected(c echo.Context) error {
	if err := s.checkCSRF(c); err != nil {
		return err
	}
	f, err := inbox.ParseFilter(c.FormValue)
	if err != nil {
		return err
	}
	form, err := c.FormParams()
	if err != nil {
		return bad("", "the form could not be read")
	}
	ans := inbox.BulkAnswer{IDs: form[inbox.FieldSelect], Action: form.Get(prompt.FieldAction), Reason: form.Get(prompt.FieldFeedback)}
	rep, err := s.inbox.Answer(c.Request().Context(), s.elicit, userOf(c), ans)
	if err != nil {
		return err
	}
	s.log.Info("bulk answer from inbox", "action", ans.Action, "resolved_by", userOf(c), "decided", len(rep.Decided),
		"already_decided", len(rep.AlreadyDecided), "needs_review", len(rep.NeedsReview),
		"needs_answers", len(rep.NeedsAnswers), "risky", len(rep.Risky), "not_found", len(rep.NotFound))
	res := views.BulkResult{Action: rep.Action, Decided: len(rep.Decided), AlreadyDecided: len(rep.AlreadyDecided),
		NeedsReview: len(rep.NeedsReview), NeedsAnswers: len(rep.NeedsAnswers), Risky: len(rep.Risky), NotFound: len(rep.NotFound)}
	if !isHTMX(c) {
		s.setFlash(c, res.Summary())
		return s.redirect(c, "/inbox"+f.Query())
	}
	d, err := s.inboxData(c)
	if err != nil {
		return err
	}
	return s.render(c, http.StatusOK, views.BulkAnswered(res, d))
}

// refuseFromList answers an inline approve of a prompt the card shows only part of:
// nothing is decided; htmx gets the card back (409) with the reason and an "Open to
// review" link in place of Approve, a plain form post is sent to the approval page.
func (s *Server) refuseFromList(c echo.Context, sess *models.Session, row *models.Elicitation, params map[string]any) error {
	const why = "This request is longer than the card shows: open it and review it whole before approving."
	if !isHTMX(c) {
		s.setFlash(c, why)
		return s.redirect(c, approvePath(row.SessionID, row.ID))
	}
	path, _, err := s.inbox.Header(c.Request().Context(), sess)
	if err != nil {
		return err
	}
	next := safeNext(c.FormValue("next"))
	ownerFrom := 1
	for i := range path {
		if next == sessionPath(path[i].ID) {
			ownerFrom = i + 1
		}
	}
	card := s.card(inbox.Item{Row: *row, Params: params, Path: path}, true, next, ownerFrom)
	card.Notice = why
	return s.render(c, http.StatusConflict, views.CardItem(card, s.csrfToken(c)))
}

// safeNext keeps a post-decision redirect on our own list pages.
func safeNext(next string) string {
	if next == "/inbox" || (strings.HasPrefix(next, "/sessions/") && !strings.ContainsAny(next[len("/sessions/"):], "/\\?#:")) {
		return next
	}
	return "/inbox"
}

// inboxData builds the inbox for the signed-in user, narrowed by the filter in the
// request's query (or, for a bulk post, its form).
func (s *Server) inboxData(c echo.Context) (views.InboxPage, error) {
	f, err := inbox.ParseFilter(c.FormValue)
	if err != nil {
		return views.InboxPage{}, err
	}
	box, err := s.inbox.Pending(c.Request().Context(), userOf(c), f)
	if err != nil {
		return views.InboxPage{}, err
	}
	d := views.InboxPage{CSRF: s.csrfToken(c), Count: box.Count, Filter: viewFilter(f)}
	if box.Count == 0 && !viewFilter(f).Active() {
		for _, l := range s.onboard.SetupCommands(s.baseURL(c)) {
			d.Setup = append(d.Setup, views.SetupLine{Vendor: l.Vendor, Command: l.Command})
		}
	}
	for _, g := range box.Groups {
		vg := views.InboxGroup{Root: crumb(&g.Root), Agent: g.Agent}
		for _, it := range g.Items {
			card := s.card(it, true, "/inbox", 1)
			card.Selectable = true
			vg.Cards = append(vg.Cards, card)
		}
		d.Groups = append(d.Groups, vg)
	}
	return d, nil
}

func viewFilter(f inbox.Filter) views.InboxFilter {
	v := views.InboxFilter{Agent: f.Agent, Session: f.Session, Tool: f.Tool, Query: f.Query()}
	if f.OlderThan > 0 {
		v.OlderThan = f.OlderThan.String()
	}
	return v
}

// card turns a pending prompt into a list card. ownerFrom is how many leading
// sessions of the prompt's path the list already shows (the group's root).
func (s *Server) card(it inbox.Item, canDecide bool, next string, ownerFrom int) views.Card {
	p := prompt.Describe(it.Row.Origin, it.Params, s.md)
	c := views.Card{
		ID: it.Row.ID, ApproveURL: approvePath(it.Row.SessionID, it.Row.ID),
		DecideURL: "/inbox/" + it.Row.SessionID + "/" + it.Row.ID, Next: next,
		Message: p.Message, Vendor: p.Vendor, Policy: p.Policy, Created: it.Row.CreatedAt,
		Summary: p.Preview, Tool: p.CardTool, QuickApprove: p.QuickApprove(), NeedsReview: p.NeedsReview(), CanDecide: canDecide, Risk: p.Risk,
	}
	if len(it.Path) > ownerFrom {
		c.Owner = crumbs(it.Path[ownerFrom:])
	}
	return c
}

// liveFeed is what a live page listens to: prompt events, and notes that the viewer's
// grants changed or a credential of theirs ended, on which regrant runs first
// (re-checking access: an error ends the stream at once; or re-reading which trees to
// follow). recheck re-checks the stream's credential and access on every heartbeat
// (notes can be lost with a database connection).
type liveFeed struct {
	events  <-chan *stream.Delivery
	grants  <-chan struct{}
	regrant func(ctx context.Context) error
	recheck func(ctx context.Context) error
	// now is the core's clock, which paces the renders.
	now func() time.Time
}

// pushFragments sends a live page's fragment at once, then again after prompt events
// or grant changes, skipping sends that would not change the page. Renders are paced
// (stream.Pacer): a burst of events costs a bounded number of renders, not one each.
func pushFragments[T any](ctx context.Context, sw *eventStream, feed liveFeed, name string,
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
		return sw.send(0, name, []byte(buf.String()))
	}
	pace := stream.NewPacer(stream.RenderEvery)
	defer pace.Stop()
	if err := send(); err != nil {
		return nil
	}
	pace.Rendered(feed.now())
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
			if err := feed.recheck(ctx); err != nil {
				return nil
			}
			if err := sw.comment("ping"); err != nil {
				return nil
			}
		}
		if pace.Due(feed.now()) {
			select {
			case <-feed.grants: // noted before this render: access first
				if err := feed.regrant(ctx); err != nil {
					return nil
				}
			default:
			}
			drain(feed.events) // what is already queued is covered by this render
			if err := send(); err != nil {
				return nil
			}
		}
	}
}

func relevant(d *stream.Delivery) bool {
	return d.Event.Type == elicit.EventRequest || d.Event.Type == elicit.EventResolved
}

// drain takes what is already queued (at most one buffer's worth, so a flood cannot
// hold the stream here), so a burst renders once.
func drain(events <-chan *stream.Delivery) {
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

// sendTestPrompt parks a harmless test prompt for the signed-in person and opens its
// approval page, so a new user can try a decision before connecting an agent.
func (s *Server) sendTestPrompt(c echo.Context) error {
	if err := s.checkCSRF(c); err != nil {
		return err
	}
	sid, eid, err := s.onboard.SendTestPrompt(c.Request().Context(), userOf(c))
	if err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, "/approve/"+sid+"/"+eid)
}
