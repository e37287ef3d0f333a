package notify

import (
	"context"
	"time"

	"github.com/gatehouse-dev/gatehouse/models"
)

// IssueLink mints an action link token as a server keyed by secret would, for tests
// of what the server does with a link it would not itself have sent.
func IssueLink(secret []byte, e *models.Elicitation, user, channel, action string) string {
	return newLinks(secret, time.Hour, time.Now).issue(e, user, channel, action)
}

// PlanAll plans every prompt behind its stage, as the dispatcher's loop does.
func (s *Service) PlanAll(ctx context.Context) (int, error) { return s.planAll(ctx) }
