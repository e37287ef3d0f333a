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
	// Rows scanned by hand: this read is on the path of every hook, and GORM's
	// reflection over the rows cost several times the query itself. (Through GORM's
	// Raw still, for the statement timeout and ErrUnavailable when Postgres is down.)
	rows, err := s.ctx(ctx).Raw(`SELECT id, effect, tool, match_kind, pattern, match_argument, scope_kind,
		scope_value, timeout_seconds, on_timeout, note, created_by, created_at, expires_at, revoked_at, revoked_by,
		fire_count, last_fired_at FROM rules
		WHERE tool = ? AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ?) ORDER BY created_at, id`, tool, now).Rows()
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []models.Rule
	for rows.Next() {
		var r models.Rule
		if err := rows.Scan(&r.ID, &r.Effect, &r.Tool, &r.MatchKind, &r.Pattern, &r.MatchArgument, &r.ScopeKind,
			&r.ScopeValue, &r.TimeoutSeconds, &r.OnTimeout, &r.Note, &r.CreatedBy, &r.CreatedAt, &r.ExpiresAt,
			&r.RevokedAt, &r.RevokedBy, &r.FireCount, &r.LastFiredAt); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// ListRules lists the rules f selects, newest first.
func (s *Store) ListRules(ctx context.Context, f models.RuleFilter, limit int) ([]models.Rule, error) {
	var rows []models.Rule
	q := s.ctx(ctx)
	if !f.All {
		cond := s.ctx(ctx).Where("created_by = ?", f.User)
		if len(f.Roots) > 0 {
			cond = cond.Or("scope_kind = ? AND scope_value IN ?", "session", f.Roots)
		}
		if f.AnyEditor || len(f.Editors) > 0 {
			by := s.ctx(ctx).Where("1 = 1")
			if !f.AnyEditor {
				by = s.ctx(ctx).Where("created_by IN ?", f.Editors)
			}
			wide := s.ctx(ctx).Where("scope_kind IN ?", []string{"global", "cwd"})
			if len(f.Agents) > 0 {
				wide = wide.Or("scope_kind = ? AND scope_value IN ?", "agent", f.Agents)
			}
			cond = cond.Or(s.ctx(ctx).Where(by).Where(wide))
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
