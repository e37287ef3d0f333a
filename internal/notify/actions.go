package notify

import (
	"context"
	"errors"
	"time"
)

// ActionResult is what using an action link did.
type ActionResult struct {
	// Outcome is elicit.OutcomeResolved when this use decided the prompt, or
	// elicit.OutcomeAlreadyResolved when somebody else had (first verdict wins).
	Outcome    string
	Action     string
	ResolvedBy string
	Prompt     Summary
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
}

// InspectAction checks an action token without using it (GET of an action link: link
// scanners and previewers must not decide anything).
func (s *Service) InspectAction(ctx context.Context, token string) (*ActionView, error) {
	return nil, errors.New("not implemented")
}

// UseAction decides the prompt a token names with its action, as the token's person,
// recording via as the channel. presenter, when not "", is who presents the token
// (signed in, or the Slack user mapped by e-mail): it must be the token's person.
func (s *Service) UseAction(ctx context.Context, token, presenter, via string) (*ActionResult, error) {
	return nil, errors.New("not implemented")
}
