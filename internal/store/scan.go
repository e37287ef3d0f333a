package store

import (
	"database/sql"

	"github.com/gatehouse-dev/gatehouse/models"
)

// elicitationColumns lists an elicitations row's columns in the order
// scanElicitation reads them.
const elicitationColumns = `id, session_id, origin, params, status, action, content, resolved_by, resolved_via,
	created_at, resolved_at, expires_at, consumed_at, lease_until, logged, notified, call_key, rule_id`

// scanElicitation reads one row of elicitationColumns without GORM, for the few hot
// statements that bypass it (see decideAndChainSQLite).
func scanElicitation(row *sql.Row) (*models.Elicitation, error) {
	var e models.Elicitation
	var params, content []byte
	err := row.Scan(&e.ID, &e.SessionID, &e.Origin, &params, &e.Status, &e.Action, &content, &e.ResolvedBy, &e.ResolvedVia,
		&e.CreatedAt, &e.ResolvedAt, &e.ExpiresAt, &e.ConsumedAt, &e.LeaseUntil, &e.Logged, &e.Notified, &e.CallKey, &e.RuleID)
	if err != nil {
		return nil, err
	}
	e.Params, e.Content = params, content
	return &e, nil
}
