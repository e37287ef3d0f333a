package store

import (
	"context"
	"time"

	"gorm.io/gorm"

	"github.com/gatehouse-dev/gatehouse/models"
)

// InsertRule stores a new rule.
func (s *Store) InsertRule(ctx context.Context, r *models.Rule) error {
	return s.w(ctx).Create(r).Error
}

// GetRule loads one rule by id.
func (s *Store) GetRule(ctx context.Context, id string) (*models.Rule, error) {
	var r models.Rule
	if err := s.ctx(ctx).Where("id = ?", id).Take(&r).Error; err != nil {
		return nil, notFound(err)
	}
	return &r, nil
}

// LiveRulesForTool lists the rules for tool that are neither revoked nor expired at
// now, oldest first. It reads the database every time — the hook path's one extra,
// indexed query — so a rule revoked on any replica stops applying on every replica at
// once, with no cache to invalidate.
func (s *Store) LiveRulesForTool(ctx context.Context, tool string, now time.Time) ([]models.Rule, error) {
	var rows []models.Rule
	err := s.ctx(ctx).Where("tool = ? AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ?)", tool, now).
		Order("created_at, id").Find(&rows).Error
	return rows, err
}

// ListRules lists rules created by user or, when rootIDs is not empty, scoped to one
// of those session trees (every rule when all is set), newest first.
func (s *Store) ListRules(ctx context.Context, all bool, user string, rootIDs []string, limit int) ([]models.Rule, error) {
	var rows []models.Rule
	q := s.ctx(ctx)
	if !all {
		cond := s.ctx(ctx).Where("created_by = ?", user)
		if len(rootIDs) > 0 {
			cond = cond.Or("scope_kind = ? AND scope_value IN ?", "session", rootIDs)
		}
		q = q.Where(cond)
	}
	return rows, q.Order("created_at DESC, id").Limit(limit).Find(&rows).Error
}

// RevokeRule stamps the rule revoked unless it already is; false when it was.
func (s *Store) RevokeRule(ctx context.Context, id, by string, at time.Time) (bool, error) {
	res := s.w(ctx).Model(&models.Rule{}).Where("id = ? AND revoked_at IS NULL", id).
		Updates(map[string]any{"revoked_at": at, "revoked_by": by})
	return res.RowsAffected == 1, res.Error
}

// RuleFired counts one more request a rule answered, at at.
func (s *Store) RuleFired(ctx context.Context, id string, at time.Time) error {
	return s.w(ctx).Model(&models.Rule{}).Where("id = ?", id).
		Updates(map[string]any{"fire_count": gorm.Expr("fire_count + 1"), "last_fired_at": at}).Error
}
