package store

import (
	"context"
	"fmt"

	"gorm.io/gorm/clause"

	"github.com/gatehouse-dev/gatehouse/models"
)

// InsertPushSubscription stores a browser's Web Push subscription. A browser that
// subscribes again with the same endpoint (a reload of the settings page, two tabs at
// once) keeps its row: the keys are refreshed and p is loaded with the stored row, id
// and creation time included, so re-adding is idempotent even when concurrent.
func (s *Store) InsertPushSubscription(ctx context.Context, p *models.PushSubscription) error {
	err := s.w(ctx).Clauses(clause.OnConflict{
		Columns:   []clause.Column{{Name: "user_id"}, {Name: "endpoint"}},
		DoUpdates: clause.AssignmentColumns([]string{"p256dh", "auth", "user_agent"}),
	}).Create(p).Error
	if err != nil {
		return fmt.Errorf("store push subscription: %w", err)
	}
	// Read into a fresh row: GORM would add p's own (new, maybe not stored) id to the
	// condition.
	var stored models.PushSubscription
	if err := s.w(ctx).Where("user_id = ? AND endpoint = ?", p.User, p.Endpoint).Take(&stored).Error; err != nil {
		return notFound(err)
	}
	*p = stored
	return nil
}

// ListPushSubscriptions lists user's subscribed browsers, newest first.
func (s *Store) ListPushSubscriptions(ctx context.Context, user string) ([]models.PushSubscription, error) {
	var rows []models.PushSubscription
	err := s.ctx(ctx).Where("user_id = ?", user).Order("created_at DESC, id").Find(&rows).Error
	return rows, err
}

// DeletePushSubscription removes user's subscription id; false when user has none
// with that id (someone else's is not found either).
func (s *Store) DeletePushSubscription(ctx context.Context, user, id string) (bool, error) {
	res := s.w(ctx).Where("id = ? AND user_id = ?", id, user).Delete(&models.PushSubscription{})
	return res.RowsAffected == 1, res.Error
}
