package store

import "context"

// Notify sends a Postgres NOTIFY on channel (outside any transaction: callers send it
// after the change it announces has committed). It is a no-op on SQLite, where there
// is only one process to tell.
func (s *Store) Notify(ctx context.Context, channel, payload string) error {
	if s.dialect != Postgres {
		return nil
	}
	return s.w(ctx).Exec("SELECT pg_notify(?, ?)", channel, payload).Error
}
