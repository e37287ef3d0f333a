package store

import (
	"context"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/gatehouse-dev/gatehouse/models"
)

type gormDB = gorm.DB

// GrantLevel returns the highest level user holds on the root session rootID, counting
// the public grant; 0 when none.
func (s *Store) GrantLevel(ctx context.Context, rootID, user string) (int, error) {
	var level *int
	err := s.ctx(ctx).Model(&models.Permission{}).Select("MAX(level)").
		Where("session_id = ? AND user_id IN ?", rootID, []string{user, PublicUser}).Scan(&level).Error
	if err != nil || level == nil {
		return 0, err
	}
	return *level, nil
}

// ListPermissions lists the grants on a root session.
func (s *Store) ListPermissions(ctx context.Context, rootID string) ([]models.Permission, error) {
	var rows []models.Permission
	return rows, s.ctx(ctx).Where("session_id = ?", rootID).Order("level DESC, user_id").Find(&rows).Error
}

// PutPermission creates or replaces a grant.
func (s *Store) PutPermission(ctx context.Context, p *models.Permission) error {
	if p.CreatedAt.IsZero() {
		p.CreatedAt = time.Now().UTC()
	}
	return s.w(ctx).Clauses(clause.OnConflict{
		Columns:   []clause.Column{{Name: "session_id"}, {Name: "user_id"}},
		DoUpdates: clause.AssignmentColumns([]string{"level"}),
	}).Create(p).Error
}

// DeletePermission removes a grant; it reports whether one existed.
func (s *Store) DeletePermission(ctx context.Context, rootID, user string) (bool, error) {
	res := s.w(ctx).Where("session_id = ? AND user_id = ?", rootID, user).Delete(&models.Permission{})
	return res.RowsAffected > 0, res.Error
}
