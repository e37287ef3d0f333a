package store

import (
	"gorm.io/gorm"

	"github.com/gatehouse-dev/gatehouse/models"
)

// GormOf is s's GORM handle, for tests that watch its statements.
func GormOf(s *Store) *gorm.DB { return s.db }

// QueuedDecisions is how many verdicts wait for their group (Postgres).
func QueuedDecisions(s *Store) int { return s.decisions.Queued() }

// DecideStatement is the statement DecideElicitation runs, for tests of its plan.
func DecideStatement(s *Store, id, sessionID string, d models.Decision) (string, []any) {
	return s.decideStatement(id, sessionID, d)
}
