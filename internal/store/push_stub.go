package store

import (
	"context"

	"github.com/gatehouse-dev/gatehouse/models"
)

// Stand-ins until the Web Push store lands (delete at merge).

func (s *Store) InsertPushSubscription(ctx context.Context, p *models.PushSubscription) error {
	return nil
}
func (s *Store) ListPushSubscriptions(ctx context.Context, user string) ([]models.PushSubscription, error) {
	return nil, nil
}
func (s *Store) DeletePushSubscription(ctx context.Context, user, id string) (bool, error) {
	return false, nil
}
