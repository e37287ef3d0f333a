package store

import (
	"context"
	"fmt"
)

// EnsureSetting returns the value stored under key, storing value first when the key
// has none. Concurrent callers — replicas starting at once on one database — all get
// the value of whichever insert landed first: the insert does nothing when the key
// exists, and the value is read back afterwards rather than assumed.
func (s *Store) EnsureSetting(ctx context.Context, key, value string) (string, error) {
	if err := s.w(ctx).Exec("INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT (key) DO NOTHING", key, value).Error; err != nil {
		return "", fmt.Errorf("store setting %s: %w", key, err)
	}
	var stored []string
	if err := s.w(ctx).Raw("SELECT value FROM settings WHERE key = ?", key).Scan(&stored).Error; err != nil {
		return "", fmt.Errorf("read setting %s: %w", key, err)
	}
	if len(stored) != 1 {
		return "", fmt.Errorf("read setting %s: %w", key, ErrNotFound)
	}
	return stored[0], nil
}
