package store

import (
	"context"
	"errors"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/gatehouse-dev/gatehouse/models"
)

// InsertRetryGrant stores g unless its prompt already has a grant (elicitation_id is
// unique): a prompt answered twice — a retry that re-attached to it — mints one grant.
// It reports whether g was stored.
func (s *Store) InsertRetryGrant(ctx context.Context, g *models.RetryGrant) (bool, error) {
	res := s.w(ctx).Clauses(clause.OnConflict{Columns: []clause.Column{{Name: "elicitation_id"}}, DoNothing: true}).Create(g)
	return res.RowsAffected == 1, res.Error
}

// ConsumeRetryGrant spends the oldest live grant for the call (session, tool, input
// hash) at now and returns it; nil when there is none (none made, spent, or expired).
// The spend is one conditional update (used_at IS NULL AND expires_at > now), so of
// two requests — on one replica or on two — presenting the same grant at once, exactly
// one gets it; the other gets nil, as if it had come second.
func (s *Store) ConsumeRetryGrant(ctx context.Context, sessionID, tool, inputHash string, now time.Time) (*models.RetryGrant, error) {
	var g models.RetryGrant
	err := s.w(ctx).Where("session_id = ? AND tool_name = ? AND input_hash = ? AND used_at IS NULL AND expires_at > ?",
		sessionID, tool, inputHash, now).Order("created_at, id").Take(&g).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	res := s.w(ctx).Model(&models.RetryGrant{}).
		Where("id = ? AND used_at IS NULL AND expires_at > ?", g.ID, now).Update("used_at", now)
	if res.Error != nil || res.RowsAffected != 1 {
		return nil, res.Error
	}
	g.UsedAt = &now
	return &g, nil
}
