package handlers

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/gatehouse-dev/gatehouse/internal/elicit"
	"github.com/gatehouse-dev/gatehouse/internal/errs"
	notifyslack "github.com/gatehouse-dev/gatehouse/internal/notify/slack"
	"github.com/gatehouse-dev/gatehouse/models"
)

// slackReplyTimeout bounds the ephemeral reply to a refused click, sent after Slack has
// its acknowledgement.
const slackReplyTimeout = 5 * time.Second

// slackInteraction is Slack's interactivity URL: a click on Approve or Reject in a
// Gatehouse direct message. It is outside the identify middleware — Slack is the caller
// and its request signature is the authentication; the person is the clicker's Slack
// e-mail, which UseAction requires to be the action token's person.
//
// Slack wants a 200 within three seconds and ignores the body of the answer to a button
// click, so every verified click gets an empty 200; a refusal (expired, used or foreign
// token, no access) is told to the clicker as an ephemeral message after that. The
// message itself shows the outcome through the dispatcher's resolved follow-up
// (chat.update), wherever the prompt was decided.
func (s *Server) slackInteraction(c echo.Context) error {
	if s.slack == nil || s.notify == nil {
		return errs.NotFound("Slack notifications are not configured")
	}
	ctx := c.Request().Context()
	click, err := s.slack.Read(ctx, c.Request())
	switch {
	case errors.Is(err, notifyslack.ErrBadSignature):
		s.log.Warn("slack interaction: bad signature", "request_id", requestID(c), "remote", c.RealIP(), "err", err)
		return errs.Unauthorized("the request is not signed with the Slack app's signing secret")
	case errors.Is(err, notifyslack.ErrMalformed):
		return errs.Invalid("payload", "not a Slack interaction payload")
	case err != nil && click == nil:
		return err // reading the body: too large, too slow, client gone
	case err != nil:
		s.log.Warn("slack interaction: who clicked", "request_id", requestID(c), "slack_user", click.SlackUserID, "err", err)
		return s.ackSlack(c, click, "Gatehouse cannot read the e-mail address of your Slack account, so it cannot tell "+
			"who you are. Open the request in Gatehouse to answer it.")
	case click == nil:
		return c.NoContent(http.StatusOK) // the Open link, or an interaction we do not act on
	}
	res, err := s.notify.UseAction(ctx, click.Token, click.Email, models.ViaSlack)
	if err != nil {
		status, _, msg := classify(err)
		if status >= 500 {
			s.log.Error("slack interaction: use action", "request_id", requestID(c), "slack_user", click.SlackUserID, "err", err)
			msg = "Gatehouse could not record your answer. Try again, or open the request in Gatehouse."
		}
		return s.ackSlack(c, click, msg)
	}
	s.log.Info("slack interaction", "request_id", requestID(c), "session_id", res.Prompt.SessionID,
		"elicitation_id", res.Prompt.ElicitationID, "outcome", res.Outcome, "action", res.Action)
	if res.Outcome == elicit.OutcomeAlreadyResolved {
		msg := "This request was already answered"
		if res.ResolvedBy != "" {
			msg += " by " + res.ResolvedBy
		}
		return s.ackSlack(c, click, msg+".")
	}
	return s.ackSlack(c, click, "")
}

// ackSlack answers Slack with an empty 200 at once and then, when text is not empty,
// shows text to the clicker. The acknowledgement is flushed first so a slow reply never
// costs Slack's three seconds.
func (s *Server) ackSlack(c echo.Context, click *notifyslack.Click, text string) error {
	res := c.Response()
	res.Header().Set(echo.HeaderContentLength, "0")
	res.WriteHeader(http.StatusOK)
	res.Flush()
	if text == "" {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(c.Request().Context()), slackReplyTimeout)
	defer cancel()
	if err := s.slack.Reply(ctx, click, text); err != nil {
		s.log.Warn("slack interaction: reply to the clicker", "request_id", requestID(c), "slack_user", click.SlackUserID, "err", err)
	}
	return nil
}
