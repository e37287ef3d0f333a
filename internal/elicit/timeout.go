package elicit

import (
	"fmt"
	"time"

	"github.com/gatehouse-dev/gatehouse/models"
)

// TimeoutVerdict is the verdict an agent gets when a wait of its own (an ask rule's, a
// policy's) of length wait ran out and onTimeout says to answer anyway: "allow" or
// "deny"; nil for "none" or "" (the usual "no verdict"). source names what set the
// wait ("Gatehouse rule rule_…", "policy 'x'"). A deny says it was a timeout, so
// nobody reads it as a person having declined.
func TimeoutVerdict(onTimeout string, wait time.Duration, source string) *models.Verdict {
	switch onTimeout {
	case "allow":
		return &models.Verdict{Action: models.ActionAccept}
	case "deny":
		return &models.Verdict{Action: models.ActionDecline, Content: map[string]any{models.ContentAutomatic: true, "feedback": fmt.Sprintf(
			"Timed out: nobody decided within %s, and %s answers deny when the wait runs out. No person declined this request.",
			wait, source)}}
	}
	return nil
}
