package notify

import (
	"context"
	"time"

	"github.com/gatehouse-dev/gatehouse/models"
)

// Delivery is one notification's status as the approval and session pages and the API
// show it: who, how, and how it went — never where (URLs and devices stay private).
type Delivery struct {
	ElicitationID string     `json:"elicitation_id"`
	Person        string     `json:"person"`
	Channel       string     `json:"channel"`
	Kind          string     `json:"kind"`
	State         string     `json:"state"`
	Attempts      int        `json:"attempts"`
	LastError     string     `json:"last_error,omitempty"`
	DeliveredAt   *time.Time `json:"delivered_at,omitempty"`
	// NextAttemptAt is when a pending delivery is due (a retry, a delay, a reminder).
	NextAttemptAt *time.Time `json:"next_attempt_at,omitempty"`
}

// FailedDetailHidden is the last error of a delivery as everyone but its recipient
// sees it.
const FailedDetailHidden = "delivery failed"

// Deliveries lists the notifications of the given prompts as viewer sees them (callers
// check access). A delivery's error detail — a dial, TLS or HTTP error naming the
// receiver's address and how it answered — is shown only to the person the delivery
// is for: to anyone else who can see the prompt it would be a probe of hosts and ports
// by way of someone's notification settings. Others read FailedDetailHidden.
func (s *Service) Deliveries(ctx context.Context, viewer string, eids ...string) ([]Delivery, error) {
	rows, err := s.store.NotificationsOfMany(ctx, eids)
	if err != nil {
		return nil, err
	}
	out := make([]Delivery, 0, len(rows))
	for i := range rows {
		d := deliveryOf(&rows[i])
		if d.LastError != "" && d.Person != viewer && d.State != models.DeliverySkipped {
			d.LastError = FailedDetailHidden // a skipped delivery's reason is Gatehouse's own words
		}
		out = append(out, d)
	}
	return out, nil
}

func deliveryOf(n *models.Notification) Delivery {
	d := Delivery{ElicitationID: n.ElicitationID, Person: n.User, Channel: n.Channel, Kind: n.Kind, State: n.State,
		Attempts: n.Attempts, LastError: n.LastError, DeliveredAt: n.DeliveredAt}
	if n.State == models.DeliveryPending {
		due := n.DueAt
		d.NextAttemptAt = &due
	}
	return d
}
