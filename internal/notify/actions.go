package notify

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"github.com/gatehouse-dev/gatehouse/internal/risk"
	"strings"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/elicit"
	"github.com/gatehouse-dev/gatehouse/internal/errs"
	"github.com/gatehouse-dev/gatehouse/internal/prompt"
	"github.com/gatehouse-dev/gatehouse/models"
)

// maxToken bounds an action token before it is decoded.
const maxToken = 1024

// linkClaims is what an action token says: one prompt, one action, one person, the
// channel it was sent on, until when, and a nonce that makes it single-use.
type linkClaims struct {
	Elicitation string `json:"e"`
	Session     string `json:"s"`
	Action      string `json:"a"`
	User        string `json:"u"`
	Channel     string `json:"c"`
	Expires     int64  `json:"x"`
	Nonce       string `json:"n"`
}

// links issues and checks action tokens: base64url(claims) "." base64url(HMAC-SHA256).
// The key is derived from the server's secret for this one use, so a token can never
// pass for a cookie or MCP state signed with the same secret.
type links struct {
	key []byte
	ttl time.Duration
	now func() time.Time
}

func newLinks(secret []byte, ttl time.Duration, now func() time.Time) *links {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte("gatehouse action links v1"))
	return &links{key: m.Sum(nil), ttl: ttl, now: now}
}

// issue makes a token for user to take action on e, valid for the link TTL or until
// the prompt expires, whichever is sooner.
func (l *links) issue(e *models.Elicitation, user, channel, action string) string {
	exp := l.now().Add(l.ttl)
	if e.ExpiresAt.Before(exp) {
		exp = e.ExpiresAt
	}
	nonce := make([]byte, 16)
	_, _ = rand.Read(nonce)
	c := linkClaims{Elicitation: e.ID, Session: e.SessionID, Action: action, User: user, Channel: channel,
		Expires: exp.Unix(), Nonce: base64.RawURLEncoding.EncodeToString(nonce)}
	body, _ := json.Marshal(c)
	payload := base64.RawURLEncoding.EncodeToString(body)
	return payload + "." + base64.RawURLEncoding.EncodeToString(l.sign(payload))
}

func (l *links) sign(payload string) []byte {
	m := hmac.New(sha256.New, l.key)
	m.Write([]byte(payload))
	return m.Sum(nil)
}

// errBadLink is the one answer for a token that is malformed or not signed here.
var errBadLink = errs.Forbidden("this link is not valid")

// check verifies a token's signature and expiry.
func (l *links) check(token string) (*linkClaims, error) {
	if len(token) > maxToken {
		return nil, errBadLink
	}
	payload, sig, ok := strings.Cut(token, ".")
	if !ok {
		return nil, errBadLink
	}
	got, err := base64.RawURLEncoding.DecodeString(sig)
	if err != nil || !hmac.Equal(got, l.sign(payload)) {
		return nil, errBadLink
	}
	body, err := base64.RawURLEncoding.DecodeString(payload)
	if err != nil {
		return nil, errBadLink
	}
	var c linkClaims
	if err := json.Unmarshal(body, &c); err != nil || c.Nonce == "" || (c.Action != models.ActionAccept && c.Action != models.ActionDecline) {
		return nil, errBadLink
	}
	if !l.now().Before(time.Unix(c.Expires, 0)) {
		return nil, errs.Gone("this link has expired: open the request to answer it")
	}
	return &c, nil
}

// ActionResult is what using an action link did.
type ActionResult struct {
	// Outcome is elicit.OutcomeResolved when this use decided the prompt, or
	// elicit.OutcomeAlreadyResolved when somebody else had (first verdict wins).
	Outcome    string
	Action     string
	ResolvedBy string
	Prompt     Summary
	ApproveURL string
}

// ActionView is what a confirmation page shows before an action link is used.
type ActionView struct {
	Action    string
	Person    string
	Channel   string
	ExpiresAt time.Time
	Prompt    Summary
	// Pending is false when the prompt was already decided (the page says by whom).
	Pending    bool
	ResolvedBy string
	ApproveURL string
}

// InspectAction checks an action token without using it (GET of an action link: link
// scanners and previewers must not decide anything). The token's person must still
// have edit access; presenter, when not "", must be that person.
func (s *Service) InspectAction(ctx context.Context, token, presenter string) (*ActionView, error) {
	c, e, sess, err := s.checkAction(ctx, token, presenter)
	if err != nil {
		return nil, err
	}
	v := &ActionView{Action: c.Action, Person: c.User, Channel: c.Channel, ExpiresAt: time.Unix(c.Expires, 0).UTC(),
		Prompt: summarize(e, sess, s.agentOf(ctx, sess)), Pending: e.IsPending(), ApproveURL: s.approveURL(e)}
	if e.ResolvedBy != nil {
		v.ResolvedBy = *e.ResolvedBy
	}
	return v, nil
}

// UseAction decides the prompt a token names with its action, as the token's person,
// recording via (the channel) as how it was decided. presenter, when not "", is who
// presents the token (signed in, or the Slack user mapped by e-mail): it must be the
// token's person. A token works once: a replay decides nothing.
func (s *Service) UseAction(ctx context.Context, token, presenter, via string) (*ActionResult, error) {
	c, e, sess, err := s.checkAction(ctx, token, presenter)
	if err != nil {
		return nil, err
	}
	sum := summarize(e, sess, s.agentOf(ctx, sess))
	if c.Action == models.ActionAccept && !sum.Answerable {
		if sum.Risk != nil && sum.Risk.Level.AtLeast(risk.High) {
			return nil, errs.Conflict("this request is of %s risk: open the approval page to decide it", sum.Risk.Level)
		}
		return nil, errs.Conflict("this request needs more than a yes: open it to answer")
	}
	fresh, err := s.store.SpendActionNonce(ctx, c.Nonce, time.Unix(c.Expires, 0))
	if err != nil {
		return nil, err
	}
	if !fresh {
		return nil, errs.Conflict("this link was already used")
	}
	r := models.Verdict{Action: c.Action}
	if c.Action == models.ActionAccept {
		// The same verdict the approval page would give for a plain "Approve".
		d, ok := prompt.Describe(e.Origin, e.DecodeParams().All, s.md).Submit(map[string][]string{prompt.FieldAction: {models.ActionAccept}})
		if !ok {
			return nil, errs.Conflict("this request needs more than a yes: open it to answer")
		}
		r.Content = d.Content
	}
	if via == "" {
		via = c.Channel
	}
	out, err := s.resolver.Resolve(ctx, e.SessionID, e.ID, r, c.User, via)
	if err != nil {
		return nil, err
	}
	res := &ActionResult{Outcome: out.Outcome, Action: c.Action, ResolvedBy: out.ResolvedBy, Prompt: sum, ApproveURL: s.approveURL(e)}
	if out.Outcome == elicit.OutcomeResolved {
		res.ResolvedBy = c.User
		s.log.Info("decided from a notification", "elicitation_id", e.ID, "action", c.Action, "by", c.User, "via", via)
	}
	return res, nil
}

// checkAction verifies a token and that its person may still act on its prompt.
func (s *Service) checkAction(ctx context.Context, token, presenter string) (*linkClaims, *models.Elicitation, *models.Session, error) {
	c, err := s.links.check(token)
	if err != nil {
		return nil, nil, nil, err
	}
	if presenter != "" && !strings.EqualFold(presenter, c.User) {
		return nil, nil, nil, errs.Forbidden("this link was sent to someone else")
	}
	e, err := s.store.GetElicitation(ctx, c.Elicitation)
	if errors.Is(err, errs.ErrNotFound) || err == nil && e.SessionID != c.Session {
		return nil, nil, nil, errs.NotFound("the request of this link no longer exists")
	}
	if err != nil {
		return nil, nil, nil, err
	}
	sess, err := s.store.GetSession(ctx, e.SessionID)
	if err != nil {
		return nil, nil, nil, err
	}
	lvl, err := s.store.GrantLevel(ctx, sess.RootID, c.User)
	if err != nil {
		return nil, nil, nil, err
	}
	if lvl < editLevel {
		return nil, nil, nil, errs.Forbidden("%s may no longer answer this request", c.User)
	}
	return c, e, sess, nil
}

func (s *Service) approveURL(e *models.Elicitation) string {
	return s.o.PublicURL + "/approve/" + e.SessionID + "/" + e.ID
}

func (s *Service) agentOf(ctx context.Context, sess *models.Session) string {
	if s.agentName == nil {
		return ""
	}
	return s.agentName(ctx, sess.AgentID)
}
