package store

import (
	"context"

	"github.com/gatehouse-dev/gatehouse/models"
)

// PendingMatching lists the pending prompts q selects, newest first. The filters run in
// the database, so a narrow query finds its prompts however many others are pending.
func (s *Store) PendingMatching(ctx context.Context, q models.PendingQuery) ([]models.Elicitation, error) {
	var rows []models.Elicitation
	db := s.ctx(ctx).Where(isPending)
	sessions := s.ctx(ctx).Model(&models.Session{}).Select("id")
	narrow := false
	if q.RootIDs != nil {
		sessions, narrow = sessions.Where("root_id IN ?", q.RootIDs), true
	}
	if q.Agent != "" {
		agents := s.ctx(ctx).Model(&models.Agent{}).Select("id").Where("id = ? OR name = ?", q.Agent, q.Agent)
		sessions, narrow = sessions.Where("agent_id IN (?)", agents), true
	}
	if q.SessionPath != "" {
		sessions, narrow = sessions.Where("path LIKE ? ESCAPE '\\'", likePrefix(q.SessionPath)), true
	}
	if narrow {
		db = db.Where("session_id IN (?)", sessions)
	}
	if q.Tool != "" {
		if s.dialect == Postgres {
			db = db.Where("params->>'tool_name' = ?", q.Tool)
		} else {
			db = db.Where("json_extract(params, '$.tool_name') = ?", q.Tool)
		}
	}
	if !q.CreatedBefore.IsZero() {
		db = db.Where("created_at < ?", q.CreatedBefore)
	}
	if q.Limit > 0 {
		db = db.Limit(q.Limit)
	}
	return rows, db.Order("created_at DESC, id").Find(&rows).Error
}
