package store

import (
	"context"
	"time"

	"github.com/gatehouse-dev/gatehouse/models"
)

// InsertSignIn stores a new browser sign-in, and removes sign-ins that ran out before
// now (so the table holds live sign-ins only, without a sweep of its own).
func (s *Store) InsertSignIn(ctx context.Context, si *models.SignIn, now time.Time) error {
	if err := s.w(ctx).Where("expires_at < ?", now).Delete(&models.SignIn{}).Error; err != nil {
		return err
	}
	return s.w(ctx).Create(si).Error
}

// SignInByHash loads the sign-in whose secret hashes to hash (ErrNotFound when none).
// It reads the database on every call, so a sign-out on any replica holds on every
// replica at once.
func (s *Store) SignInByHash(ctx context.Context, hash string) (*models.SignIn, error) {
	var si models.SignIn
	if err := s.ctx(ctx).Where("hash = ?", hash).Take(&si).Error; err != nil {
		return nil, notFound(err)
	}
	return &si, nil
}

// DeleteSignIn removes the sign-in hash and returns whose it was (ok false when there
// was none). On Postgres the same statement announces the end of that person's
// credential on stream.GrantsChannel (accessEndedNotify), so every replica's streams
// opened with it re-check before they send anything committed after it.
func (s *Store) DeleteSignIn(ctx context.Context, hash string) (user string, ok bool, err error) {
	var users []string
	if s.dialect == Postgres {
		err = s.w(ctx).Raw(`WITH d AS (DELETE FROM sign_ins WHERE hash = ? RETURNING user_id)
			SELECT d.user_id FROM d CROSS JOIN LATERAL (SELECT `+accessEndedNotify("d.user_id")+`) AS n`, hash).
			Scan(&users).Error
	} else {
		err = s.w(ctx).Raw(`DELETE FROM sign_ins WHERE hash = ? RETURNING user_id`, hash).Scan(&users).Error
	}
	if err != nil || len(users) != 1 {
		return "", false, err
	}
	return users[0], true, nil
}
