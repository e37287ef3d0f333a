package store

import "gorm.io/gorm"

// GormOf is s's GORM handle, for tests that watch its statements.
func GormOf(s *Store) *gorm.DB { return s.db }

// QueuedDecisions is how many verdicts wait for their group (Postgres).
func QueuedDecisions(s *Store) int { return s.decisions.Queued() }
