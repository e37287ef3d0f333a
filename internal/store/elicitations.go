package store

import (
	"context"
	"database/sql"
	"errors"
	"strconv"
	"strings"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/gatehouse-dev/gatehouse/internal/audit"
	"github.com/gatehouse-dev/gatehouse/internal/stream"
	"github.com/gatehouse-dev/gatehouse/models"
)

// InsertElicitation inserts a new pending row. An id that already exists is ErrConflict.
func (s *Store) InsertElicitation(ctx context.Context, e *models.Elicitation) error {
	if s.inserts != nil {
		in := &insertion{ctx: ctx, row: e}
		s.inserts.Do(in)
		return in.err
	}
	return s.insertOne(ctx, e)
}

func (s *Store) insertOne(ctx context.Context, e *models.Elicitation) error {
	err := s.w(ctx).Create(e).Error
	if isUniqueViolation(err) {
		return ErrConflict
	}
	return err
}

// insertion is one InsertElicitation waiting for its group (Postgres).
type insertion struct {
	ctx context.Context
	row *models.Elicitation
	err error
}

// maxGroupInserts bounds the rows one INSERT carries (far below Postgres' 65,535
// parameters per statement).
const maxGroupInserts = 256

// insertGroup stores a group of prompts with one INSERT (one round trip, one commit),
// on Postgres: requests parking at once otherwise each waited for a commit of their
// own. A group that fails — one of its ids taken (a retry re-attaching), a caller gone
// — is stored row by row, so each insertion gets its own outcome.
func (s *Store) insertGroup(g []*insertion) {
	if len(g) > 1 {
		rows := make([]*models.Elicitation, len(g))
		for i, in := range g {
			rows[i] = in.row
		}
		// The group's statement is everyone's, so no one caller hanging up cancels it
		// (the store's statement timeout still bounds it): a prompt stored for a caller
		// gone meanwhile lapses after the disconnect grace, as one stored just before
		// its caller hung up always did.
		if s.w(context.WithoutCancel(g[0].ctx)).Create(&rows).Error == nil {
			return
		}
	}
	for _, in := range g {
		in.err = s.insertOne(in.ctx, in.row)
	}
}

// GetElicitation loads one row by id.
func (s *Store) GetElicitation(ctx context.Context, id string) (*models.Elicitation, error) {
	var e models.Elicitation
	if err := s.ctx(ctx).Where("id = ?", id).Take(&e).Error; err != nil {
		return nil, notFound(err)
	}
	return &e, nil
}

// pgLiveLink is the version 2 hash of the decided row d after the head's hash.
var pgLiveLink = pgLinkV2("d", audit.KindLive, "audit_head.hash")

// DecideElicitation moves the row from pending to d.Status when, and only when, it is
// still pending and owned by sessionID, and returns the decided row — read back by the
// same statement (RETURNING). A nil row with a nil error means this call did not win:
// somebody decided first, or the row is not this session's, or it does not exist.
//
// The decision is appended to the audit chain (internal/audit) atomically with it. On
// Postgres one statement decides, appends and notifies, so deciding still costs one
// round trip: it updates the chain's head row (whose lock, held to commit, lines up
// deciders on every replica; a waiting decider re-reads the head once the lock is
// free), hashes in SQL (sha256, audit version 2) over every column of the decided row
// as stored, and inserts the chain row. On SQLite (one writer at a time anyway) a
// short transaction does the same in Go. A rule's decision (models.ViaRule) also
// counts the rule's fire in the same commit.
func (s *Store) DecideElicitation(ctx context.Context, id, sessionID string, d models.Decision) (*models.Elicitation, error) {
	query, args := s.decideStatement(id, sessionID, d)
	if s.dialect == SQLite {
		return s.decideAndChainSQLite(ctx, query, args, firedRule(d))
	}
	dc := &decision{ctx: ctx, id: id, query: query, args: args}
	s.decisions.Do(dc)
	return dc.row, dc.err
}

// followedUpIfNobodyWasTold marks a decided prompt's notifications planned to the end
// (NotifiedAll) when it has none: the planner's follow-up for it would plan nothing
// (notify.Service.followUp sends the answer only where the question went), yet it
// took a commit of its own after every verdict. A prompt with deliveries keeps its
// stage for the planner. SQLite only: its writers take turns, so the planner cannot be
// adding deliveries between the check and the update; on Postgres it could, unseen by
// this statement's snapshot.
var followedUpIfNobodyWasTold = `, notified = CASE WHEN notified < ` + notifiedAll + ` AND NOT EXISTS
	(SELECT 1 FROM notifications WHERE notifications.elicitation_id = elicitations.id) THEN ` + notifiedAll + ` ELSE notified END`

// notifiedAll is models.NotifiedAll as SQL.
var notifiedAll = strconv.Itoa(models.NotifiedAll)

// decideStatement is DecideElicitation's statement: on SQLite the deciding UPDATE,
// on Postgres that UPDATE with the chain's append, the rule's fire and the NOTIFY.
//
// The prompt is found by its primary key alone: the other conditions are wrapped in
// IS TRUE, which no index can serve. Right after a burst of prompts in one session,
// before Postgres' statistics have caught up, the planner otherwise took the
// session's (session_id, status) index and filtered every pending prompt of the
// session for each verdict — 80 ms a verdict with 5,000 pending, all of it holding
// the chain's head lock that every other verdict waits for.
func (s *Store) decideStatement(id, sessionID string, d models.Decision) (string, []any) {
	// Both databases keep microseconds; the hash covers exactly what is stored.
	d.At = d.At.UTC().Truncate(time.Microsecond)
	var action *string
	if d.Action != "" {
		action = &d.Action
	}
	// No content is NULL: a nil interface (SQLite stores a nil []byte as an empty blob,
	// which the audit chain would tell apart from NULL); bytes as every other JSON
	// column is written.
	var content any
	if len(d.Content) > 0 {
		content = []byte(d.Content)
	}
	set := `status = ?, action = ?, content = ?, resolved_by = ?, resolved_via = ?, resolved_at = ?, chained = TRUE`
	args := []any{d.Status, action, content, d.By, d.Via, d.At}
	if d.RuleID != "" {
		set += `, rule_id = ?`
		args = append(args, d.RuleID)
	}
	cond := `session_id = ? AND status = ?`
	args = append(args, id, sessionID, models.StatusPending)
	if d.OnlyIfLeaseAsSeen {
		cond += ` AND lease_until = ?`
		args = append(args, d.SeenLease)
	}
	if s.dialect == SQLite {
		set += followedUpIfNobodyWasTold
	}
	query := `UPDATE elicitations SET ` + set + ` WHERE id = ? AND (` + cond + `) IS TRUE`
	if s.dialect == SQLite {
		return query + ` RETURNING ` + elicitationColumns, args
	}
	query += ` RETURNING *`
	// The note that wakes waiters on other replicas goes out with the commit itself:
	// no window in which the decision is stored but nobody is told. The chain row's
	// hash is computed here from the decided row as stored (d), so it covers exactly
	// what a verifier reads back.
	return `WITH d AS (` + query + `),
		h AS (UPDATE audit_head SET seq = audit_head.seq + 1, prev_hash = audit_head.hash,
				hash = ` + pgLiveLink + `
			FROM d WHERE audit_head.id = 1
			RETURNING audit_head.seq, audit_head.prev_hash, audit_head.hash),
		c AS (INSERT INTO audit_chain (seq, elicitation_id, prev_hash, hash, version, backfilled)
			SELECT h.seq, d.id, h.prev_hash, h.hash, ` + strconv.Itoa(audit.Current) + `, FALSE FROM d CROSS JOIN h)` + firedRulePG(d) + `
		SELECT ` + decidedColumnsOf("d") + ` FROM d
			CROSS JOIN LATERAL (SELECT pg_notify('` + stream.DecidedChannel + `', d.id)) AS notified`, args
}

// decision is one DecideElicitation waiting for its group (Postgres).
type decision struct {
	ctx   context.Context
	id    string
	query string
	args  []any
	row   *models.Elicitation
	err   error
}

// maxGroupDecisions bounds the verdicts one transaction carries.
const maxGroupDecisions = 64

// decideGroup commits a group of verdicts given at once in one transaction, on
// Postgres. Each verdict's commit flushes the write-ahead log, and the audit chain's
// head lock, held until then, lined verdicts up one flush after another: 32 people
// deciding at once got about 170 verdicts a second. In one transaction they share the
// flush. Each is still its own statement, deciding its prompt only while it is pending:
// two verdicts on one prompt in a group decide it once — the first — and the second
// sees it decided. The group first locks its prompts in id order, before the chain's
// head, as every single verdict does: two groups, or a group and a single verdict,
// never wait on each other in a cycle. A group that fails is decided verdict by
// verdict, so each gets its own outcome.
func (s *Store) decideGroup(g []*decision) {
	if len(g) > 1 {
		ids := make([]string, len(g))
		for i, dc := range g {
			ids[i] = dc.id
		}
		// The group's transaction is everyone's, so no one caller hanging up cancels
		// it: a verdict committed for a caller gone meanwhile stands, as one committed
		// just before its caller hung up always did.
		err := s.writeSQL(context.WithoutCancel(g[0].ctx), func(tx sqlTx) error {
			args := make([]any, len(ids))
			for i, id := range ids {
				args[i] = id
			}
			lock := `SELECT id FROM elicitations WHERE id IN ` + placeholders(1, len(ids)) + ` ORDER BY id FOR UPDATE`
			if err := tx.queryRows(lock, args, func(scan func(dest ...any) error) error {
				var id string
				return scan(&id)
			}); err != nil {
				return err
			}
			for _, dc := range g {
				var err error
				if dc.row, err = decidedRow(tx.tx.QueryRowContext(tx.ctx, tx.q(dc.query), dc.args...)); err != nil {
					return err
				}
			}
			return nil
		})
		if err == nil {
			return
		}
	}
	for _, dc := range g {
		// Each in a commit of its own: one statement, one round trip.
		dc.row, dc.err = s.decideAlone(dc)
	}
}

// decideAlone runs one verdict's statement by itself (Postgres). database/sql
// directly, as the rule answers' commits: GORM's scanning was a fifth of a park and
// its verdict's CPU.
func (s *Store) decideAlone(dc *decision) (*models.Elicitation, error) {
	db, err := s.wdb.DB()
	if err != nil {
		return nil, err
	}
	ctx, cancel := s.deadline(dc.ctx)
	defer cancel()
	return decidedRow(db.QueryRowContext(ctx, numberPlaceholders(dc.query), dc.args...))
}

// decidedRow is the row a verdict's statement decided: nil when the verdict did not
// win (no row came back).
func decidedRow(row *sql.Row) (*models.Elicitation, error) {
	e, err := scanElicitation(row)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, unavailable(err)
	}
	return e, nil
}

// decidedColumnsOf is elicitationColumns, each of table t.
func decidedColumnsOf(t string) string {
	cols := strings.Split(elicitationColumns, ",")
	for i, c := range cols {
		cols[i] = t + "." + strings.TrimSpace(c)
	}
	return strings.Join(cols, ", ")
}

// firedRule is the rule whose decision d is ("" when d is not a rule's): its fire
// count moves in the decision's own commit, so a rule-answered request costs the single
// writer one transaction less, and the count never runs ahead of the decisions.
func firedRule(d models.Decision) string {
	if d.Via != models.ViaRule {
		return ""
	}
	return d.RuleID
}

// firedRulePG is DecideElicitation's Postgres statement's part counting firedRule(d)'s
// fire at the decision's time (nothing when d is not a rule's).
func firedRulePG(d models.Decision) string {
	if firedRule(d) == "" {
		return ""
	}
	return `,
		f AS (UPDATE rules SET fire_count = rules.fire_count + 1, last_fired_at = d.resolved_at FROM d WHERE rules.id = d.rule_id)`
}

// PendingInSubtree lists pending rows owned by the session at path or any descendant,
// oldest first.
func (s *Store) PendingInSubtree(ctx context.Context, path string) ([]models.Elicitation, error) {
	var rows []models.Elicitation
	err := s.ctx(ctx).Where("status = ? AND session_id IN (?)", models.StatusPending,
		s.ctx(ctx).Model(&models.Session{}).Select("id").Where("path LIKE ? ESCAPE '\\'", likePrefix(path))).
		Order("created_at, id").Find(&rows).Error
	return rows, err
}

// CountPendingBySession counts pending rows per owning session for the given ids.
func (s *Store) CountPendingBySession(ctx context.Context, ids []string) (map[string]int, error) {
	out := map[string]int{}
	if len(ids) == 0 {
		return out, nil
	}
	return scanCounts(s.ctx(ctx).Model(&models.Elicitation{}).Select("session_id, COUNT(*) AS n").
		Where("status = ? AND session_id IN ?", models.StatusPending, ids).Group("session_id"))
}

// CountPendingInSubtrees counts, for each of the given sessions, the pending rows owned
// by it or by any of its descendants — what that session's snapshot lists — in one query.
// A descendant's path starts with its ancestor's path; substr keeps the comparison free
// of LIKE wildcards (session ids contain "_").
func (s *Store) CountPendingInSubtrees(ctx context.Context, ids []string) (map[string]int, error) {
	out := map[string]int{}
	if len(ids) == 0 {
		return out, nil
	}
	return scanCounts(s.ctx(ctx).Table("sessions AS s").
		Select("s.id AS session_id, COUNT(e.id) AS n").
		Joins("JOIN sessions AS d ON d.root_id = s.root_id AND substr(d.path, 1, length(s.path)) = s.path").
		Joins("JOIN elicitations AS e ON e.session_id = d.id").
		Where("e.status = ? AND s.id IN ?", models.StatusPending, ids).
		Group("s.id"))
}

// scanCounts runs a query selecting (session_id, n) rows into a map; sessions without
// rows are absent (zero).
func scanCounts(q *gorm.DB) (map[string]int, error) {
	var rows []struct {
		SessionID string
		N         int
	}
	err := q.Scan(&rows).Error
	out := make(map[string]int, len(rows))
	for _, r := range rows {
		out[r.SessionID] = r.N
	}
	return out, err
}

// RecentDecidedInSubtree lists the latest decided rows in a subtree, newest first.
func (s *Store) RecentDecidedInSubtree(ctx context.Context, path string, limit int) ([]models.Elicitation, error) {
	var rows []models.Elicitation
	err := s.ctx(ctx).Where("status <> ? AND session_id IN (?)", models.StatusPending,
		s.ctx(ctx).Model(&models.Session{}).Select("id").Where("path LIKE ? ESCAPE '\\'", likePrefix(path))).
		Order("resolved_at DESC, id").Limit(limit).Find(&rows).Error
	return rows, err
}

// isPending selects the pending prompts, with the status written out: the index of
// pending prompts by deadline (elicitations_pending_expires) holds those alone, and
// Postgres uses a partial index only for a query whose own condition implies the
// index's — which a bound parameter, unknown when a plan is made for every value,
// does not.
const isPending = "status = '" + models.StatusPending + "'"

// DuePending lists pending rows whose deadline has passed.
func (s *Store) DuePending(ctx context.Context, now time.Time, limit int) ([]models.Elicitation, error) {
	var rows []models.Elicitation
	err := s.ctx(ctx).Where(isPending+" AND expires_at <= ?", now).
		Order("expires_at").Limit(limit).Find(&rows).Error
	return rows, err
}

// CountPending counts every pending row.
func (s *Store) CountPending(ctx context.Context) (int64, error) {
	var n int64
	err := s.ctx(ctx).Model(&models.Elicitation{}).Where(isPending).Count(&n).Error
	return n, err
}

// ConsumeApproval spends an accepted approval: it marks the row consumed when, and
// only when, it is accepted and not yet consumed. Exactly one of many concurrent
// callers gets true.
func (s *Store) ConsumeApproval(ctx context.Context, id, sessionID string, at time.Time) (bool, error) {
	res := s.w(ctx).Model(&models.Elicitation{}).
		Where("id = ? AND (session_id = ? AND status = ? AND action = ? AND consumed_at IS NULL) IS TRUE", // by id alone (decideStatement)
			id, sessionID, models.StatusResolved, "accept").
		Update("consumed_at", at)
	return res.RowsAffected == 1, res.Error
}

// RenewLeases moves the lease of the pending prompts ids to until (see
// models.Elicitation.LeaseUntil). until should have microsecond precision (what
// Postgres stores), so that it compares equal when read back.
//
// On Postgres the prompts are locked in id order first, as every statement locking
// several prompts does (a group of verdicts, claimStages): one UPDATE over many ids
// locks them in whatever order its plan reads them, and deadlocked with a group of
// verdicts or of logged events — each broken by Postgres only after a second.
func (s *Store) RenewLeases(ctx context.Context, ids []string, until time.Time) error {
	for len(ids) > 0 {
		n := min(len(ids), 500)
		which := s.w(ctx).Model(&models.Elicitation{}).Select("id").Where("id IN ? AND (status = ?) IS TRUE", ids[:n], models.StatusPending) // by id alone (decideStatement)
		if s.dialect == Postgres {
			which = which.Order("id").Clauses(clause.Locking{Strength: clause.LockingStrengthUpdate})
		}
		err := s.w(ctx).Model(&models.Elicitation{}).Where("id IN (?)", which).
			Update("lease_until", until).Error
		if err != nil {
			return err
		}
		ids = ids[n:]
	}
	return nil
}

// LapsedLeases lists pending prompts whose lease ran out by now: their waiter is gone.
func (s *Store) LapsedLeases(ctx context.Context, now time.Time, limit int) ([]models.Elicitation, error) {
	var rows []models.Elicitation
	err := s.ctx(ctx).Select("id", "session_id", "lease_until").
		Where("status = ? AND lease_until IS NOT NULL AND lease_until <= ?", models.StatusPending, now).
		Order("lease_until").Limit(limit).Find(&rows).Error
	return rows, err
}

// LatestMCPApproval finds the approval a retried MCP tool call may re-use: the newest
// prompt of sessionID with callKey that is still pending, accepted and not yet spent,
// or declined at or after declinedSince (so a quick retry after a "no" is told no,
// while the same call much later asks again). nil when there is none.
func (s *Store) LatestMCPApproval(ctx context.Context, sessionID, callKey string, declinedSince time.Time) (*models.Elicitation, error) {
	var rows []models.Elicitation
	err := s.ctx(ctx).Where("session_id = ? AND call_key = ?", sessionID, callKey).
		Where(s.ctx(ctx).Where("status = ?", models.StatusPending).
			Or("status = ? AND action = ? AND consumed_at IS NULL", models.StatusResolved, "accept").
			Or("status = ? AND action = ? AND resolved_at >= ?", models.StatusResolved, "decline", declinedSince)).
		Order("created_at DESC").Limit(1).Find(&rows).Error
	if err != nil || len(rows) == 0 {
		return nil, err
	}
	return &rows[0], nil
}
