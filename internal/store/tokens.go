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

// APITokenByID loads token id (ErrNotFound when none), revoked or not: a live stream
// re-reads the token it was opened with before it sends more.
func (s *Store) APITokenByID(ctx context.Context, id string) (*models.APIToken, error) {
	var t models.APIToken
	if err := s.ctx(ctx).Where("id = ?", id).Take(&t).Error; err != nil {
		return nil, notFound(err)
	}
	return &t, nil
}

// RevokeAPIToken stamps owner's token id revoked; false when owner has no such live token.
// On Postgres the same statement announces the end of owner's credential on
// stream.GrantsChannel (accessEndedNotify), so every replica hears of it with the commit:
// an event committed after the revocation reaches a replica's streams only after the
// note has made them re-check.
func (s *Store) RevokeAPIToken(ctx context.Context, id, owner string, at time.Time) (bool, error) {
	if s.dialect == Postgres {
		var owners []string
		err := s.w(ctx).Raw(`WITH r AS (UPDATE api_tokens SET revoked_at = ? WHERE id = ? AND owner = ? AND revoked_at IS NULL
			RETURNING owner) SELECT r.owner FROM r CROSS JOIN LATERAL (SELECT `+accessEndedNotify("r.owner")+`) AS n`,
			at, id, owner).Scan(&owners).Error
		return len(owners) == 1, err
	}
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
