package store

import (
	"context"
	"time"

	"gorm.io/gorm"

	"github.com/gatehouse-dev/gatehouse/internal/stream"
	"github.com/gatehouse-dev/gatehouse/models"
)

// InsertRule stores a new rule. On Postgres the rule's RulesChannel note is sent with
// its commit, so every replica drops its cached rules; this one drops them at once.
func (s *Store) InsertRule(ctx context.Context, r *models.Rule) error {
	defer s.rules.drop()
	if s.dialect != Postgres {
		return s.w(ctx).Create(r).Error
	}
	return s.inTx(ctx, s.wdb, func(tx *gorm.DB) error {
		if err := tx.Create(r).Error; err != nil {
			return err
		}
		return tx.Exec("SELECT pg_notify(?, ?)", stream.RulesChannel, r.ID).Error
	})
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
// now, oldest first, without their fire counts (FireCount and LastFiredAt are zero: a
// count shown to a person comes from GetRule or ListRules). This read is on the path of
// every hook, so it answers from the rule cache when it can (see ruleCache) — as right
// as the query: a rule made or revoked on this replica applies to the next request, one
// made or revoked on another as soon as this replica hears its note, and expiry is
// checked against now every time. Otherwise it reads the database.
func (s *Store) LiveRulesForTool(ctx context.Context, tool string, now time.Time) ([]models.Rule, error) {
	if rows, ok := s.rules.get(tool, now); ok {
		return rows, nil
	}
	gen, cache := s.rules.begin()
	if !cache {
		return s.queryLiveRules(ctx, "tool = ? AND ", []any{tool, now})
	}
	all, err := s.queryLiveRules(ctx, "", []any{now})
	if err != nil {
		return nil, err
	}
	s.rules.put(gen, now, all)
	var out []models.Rule
	for _, r := range all {
		if r.Tool == tool {
			out = append(out, r)
		}
	}
	return out, nil
}

// queryLiveRules reads the rules live at the last of args (after those cond's
// placeholders take), oldest first.
func (s *Store) queryLiveRules(ctx context.Context, cond string, args []any) ([]models.Rule, error) {
	// Rows scanned by hand: GORM's reflection over the rows costs several times the
	// query itself. (Through GORM's Raw still, for the statement timeout and
	// ErrUnavailable when Postgres is down.)
	rows, err := s.ctx(ctx).Raw(`SELECT id, effect, tool, match_kind, pattern, match_argument, scope_kind,
		scope_value, timeout_seconds, on_timeout, note, created_by, created_at, expires_at, revoked_at, revoked_by
		FROM rules WHERE `+cond+`revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ?) ORDER BY created_at, id`, args...).Rows()
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []models.Rule
	for rows.Next() {
		var r models.Rule
		if err := rows.Scan(&r.ID, &r.Effect, &r.Tool, &r.MatchKind, &r.Pattern, &r.MatchArgument, &r.ScopeKind,
			&r.ScopeValue, &r.TimeoutSeconds, &r.OnTimeout, &r.Note, &r.CreatedBy, &r.CreatedAt, &r.ExpiresAt,
			&r.RevokedAt, &r.RevokedBy); err != nil {
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

// RevokeRule stamps the rule revoked unless it already is; false when it was. On
// Postgres the RulesChannel note is sent with the commit (see InsertRule).
func (s *Store) RevokeRule(ctx context.Context, id, by string, at time.Time) (bool, error) {
	defer s.rules.drop()
	revoked := false
	err := s.inTx(ctx, s.wdb, func(tx *gorm.DB) error {
		res := tx.Model(&models.Rule{}).Where("id = ? AND revoked_at IS NULL", id).
			Updates(map[string]any{"revoked_at": at, "revoked_by": by})
		if res.Error != nil || res.RowsAffected != 1 {
			return res.Error
		}
		revoked = true
		if s.dialect != Postgres {
			return nil
		}
		return tx.Exec("SELECT pg_notify(?, ?)", stream.RulesChannel, id).Error
	})
	return revoked && err == nil, err
}

// RuleFired counts one more request a rule answered, at at.
func (s *Store) RuleFired(ctx context.Context, id string, at time.Time) error {
	return s.w(ctx).Model(&models.Rule{}).Where("id = ?", id).
		Updates(map[string]any{"fire_count": gorm.Expr("fire_count + 1"), "last_fired_at": at}).Error
}
