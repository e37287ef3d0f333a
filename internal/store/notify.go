package store

import (
	"context"

	"github.com/gatehouse-dev/gatehouse/internal/stream"
)

// Notify sends a Postgres NOTIFY on channel (outside any transaction: callers send it
// after the change it announces has committed). It is a no-op on SQLite, where there
// is only one process to tell.
func (s *Store) Notify(ctx context.Context, channel, payload string) error {
	if s.dialect != Postgres {
		return nil
	}
	return s.w(ctx).Exec("SELECT pg_notify(?, ?)", channel, payload).Error
}

// accessEndedNotify is the SQL call that announces, on stream.GrantsChannel, the end
// of a credential of the person userExpr names (a column of the statement it is part
// of), so the note is sent by the very statement that ends it.
func accessEndedNotify(userExpr string) string {
	return `pg_notify('` + stream.GrantsChannel + `', json_build_object('root', '', 'user', ` + userExpr + `)::text)`
}
