package store

import (
	"context"

	"github.com/gatehouse-dev/gatehouse/models"
)

// DecidedMatching lists the decided prompts q selects, newest decision first (ties by
// id, descending), so a page ends at a cursor the next page starts after. The filters
// run in the database; the elicitations_decided index serves the order.
func (s *Store) DecidedMatching(ctx context.Context, q models.DecidedQuery) ([]models.Elicitation, error) {
	var rows []models.Elicitation
	if q.RootIDs != nil && len(q.RootIDs) == 0 {
		return rows, nil
	}
	db := s.ctx(ctx).Where("status <> ? AND resolved_at IS NOT NULL", models.StatusPending)
	sessions := s.ctx(ctx).Model(&models.Session{}).Select("id")
	narrow := false
	if q.RootIDs != nil {
		sessions, narrow = sessions.Where("root_id IN ?", q.RootIDs), true
	}
	if q.Agent != "" {
		agents := s.ctx(ctx).Model(&models.Agent{}).Select("id").Where("id = ? OR name = ?", q.Agent, q.Agent)
		sessions, narrow = sessions.Where("agent_id IN (?)", agents), true
	}
	if narrow {
		db = db.Where("session_id IN (?)", sessions)
	}
	if q.Status != "" {
		db = db.Where("status = ?", q.Status)
	}
	if q.Action != "" {
		db = db.Where("action = ?", q.Action)
	}
	if q.Risk != "" {
		if s.dialect == Postgres {
			db = db.Where("params->'risk'->>'level' = ?", q.Risk)
		} else {
			db = db.Where("json_extract(params, '$.risk.level') = ?", q.Risk)
		}
	}
	if c := q.Before; c != nil {
		db = db.Where("resolved_at < ? OR (resolved_at = ? AND id < ?)", c.At, c.At, c.ID)
	}
	if q.Limit > 0 {
		db = db.Limit(q.Limit)
	}
	return rows, db.Order("resolved_at DESC, id DESC").Find(&rows).Error
}
