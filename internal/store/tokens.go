package store

import (
	"context"
	"time"

	"github.com/gatehouse-dev/gatehouse/models"
)

// InsertAPIToken stores a new personal API token.
func (s *Store) InsertAPIToken(ctx context.Context, t *models.APIToken) error {
	return s.w(ctx).Create(t).Error
}

// APITokenByHash loads the token whose secret hashes to hash (ErrNotFound when none).
// It reads the database on every call, so a token revoked on any replica stops
// working on every replica at once.
func (s *Store) APITokenByHash(ctx context.Context, hash string) (*models.APIToken, error) {
	var t models.APIToken
	if err := s.ctx(ctx).Where("hash = ?", hash).Take(&t).Error; err != nil {
		return nil, notFound(err)
	}
	return &t, nil
}

// ListAPITokens lists owner's tokens that are not revoked, newest first.
func (s *Store) ListAPITokens(ctx context.Context, owner string) ([]models.APIToken, error) {
	var rows []models.APIToken
	err := s.ctx(ctx).Where("owner = ? AND revoked_at IS NULL", owner).Order("created_at DESC, id").Find(&rows).Error
	return rows, err
}

// RevokeAPIToken stamps owner's token id revoked; false when owner has no such live token.
func (s *Store) RevokeAPIToken(ctx context.Context, id, owner string, at time.Time) (bool, error) {
	res := s.w(ctx).Model(&models.APIToken{}).Where("id = ? AND owner = ? AND revoked_at IS NULL", id, owner).
		Update("revoked_at", at)
	return res.RowsAffected == 1, res.Error
}

// TouchAPIToken records a use of token id at at, unless a use since staleBefore is
// already recorded (so concurrent requests on several replicas write at most once).
func (s *Store) TouchAPIToken(ctx context.Context, id string, at, staleBefore time.Time) error {
	return s.w(ctx).Model(&models.APIToken{}).
		Where("id = ? AND (last_used_at IS NULL OR last_used_at < ?)", id, staleBefore).
		Update("last_used_at", at).Error
}
