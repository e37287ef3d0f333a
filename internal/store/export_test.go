package store

import "gorm.io/gorm"

// GormOf is s's GORM handle, for tests that watch its statements.
func GormOf(s *Store) *gorm.DB { return s.db }
