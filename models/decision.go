package models

import (
	"encoding/json"
	"time"
)

// Decision is what deciding an elicitation writes: how it ended, the verdict, who gave
// it and through what. The domain core builds it and the store writes it, so it lives
// here, beside the row it changes.
type Decision struct {
	Status  string
	Action  string
	Content json.RawMessage
	By      string
	Via     string
	At      time.Time
	// OnlyIfLeaseAsSeen makes the decision lose when a waiter renewed the prompt's
	// lease (on any replica) after the caller looked: lease_until must still be
	// SeenLease. Comparing the stamp itself, not times, keeps replicas' clocks out of
	// the race.
	OnlyIfLeaseAsSeen bool
	SeenLease         time.Time
	// RuleID, when set, records the Gatehouse rule that made the decision.
	RuleID string
}
