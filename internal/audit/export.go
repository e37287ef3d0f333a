package audit

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/auth"
	"github.com/gatehouse-dev/gatehouse/internal/errs"
	"github.com/gatehouse-dev/gatehouse/models"
)

// Export formats.
const (
	FormatJSONL = "jsonl"
	FormatCSV   = "csv"
)

// Outcomes a query may ask for: a person's (or policy's) action, or how a prompt
// ended without one.
var outcomes = map[string][2]string{
	"accept":    {models.StatusResolved, "accept"},
	"decline":   {models.StatusResolved, "decline"},
	"cancel":    {models.StatusResolved, "cancel"},
	"resolved":  {models.StatusResolved, ""},
	"expired":   {models.StatusExpired, ""},
	"abandoned": {models.StatusAbandoned, ""},
}

// OutcomeColumns maps a valid outcome to the status and (possibly empty) action it
// selects.
func OutcomeColumns(outcome string) (status, action string) {
	o := outcomes[outcome]
	return o[0], o[1]
}

// Query is an export request as the API takes it.
type Query struct {
	Format  string
	From    time.Time // resolved at or after (zero: no bound)
	To      time.Time // resolved before (zero: no bound)
	Session string    // a session id: its rows and its descendants'
	Person  string    // resolved_by
	Outcome string    // see outcomes
}

// Filter is a Query resolved into what the store selects.
type Filter struct {
	// RootIDs limits rows to these session trees; nil means no limit, empty means none.
	RootIDs     []string
	SessionPath string
	From, To    time.Time
	Person      string
	Outcome     string
}

// Store is what Export reads.
type Store interface {
	ExportPage(ctx context.Context, f Filter, after int64, limit int) ([]Record, error)
	ListRootsVisibleTo(ctx context.Context, user string) ([]models.Session, error)
	GetSession(ctx context.Context, id string) (*models.Session, error)
	// LatestAuditCheckpoint reads the most recent daily checkpoint (errs.ErrNotFound
	// when none was taken yet).
	LatestAuditCheckpoint(ctx context.Context) (*Checkpoint, error)
}

// Service exports the audit trail.
type Service struct {
	store  Store
	access *auth.Checker
}

// New builds the export service.
func New(st Store, access *auth.Checker) *Service { return &Service{store: st, access: access} }

// LatestCheckpoint is the most recent signed daily checkpoint of the chain's head, for
// admins (everyone with --auth none): whoever keeps these outside the database can
// later prove the chain was cut short or rewritten.
func (s *Service) LatestCheckpoint(ctx context.Context, user string) (*Checkpoint, error) {
	if !s.access.SeesAll(user) {
		return nil, errs.Forbidden("only admins read the audit checkpoint")
	}
	c, err := s.store.LatestAuditCheckpoint(ctx)
	if errors.Is(err, errs.ErrNotFound) {
		return nil, errs.NotFound("no audit checkpoint has been taken yet")
	}
	return c, err
}

// Validate checks a query before anything is written.
func (q *Query) Validate() error {
	switch q.Format {
	case "":
		q.Format = FormatJSONL
	case FormatJSONL, FormatCSV:
	default:
		return errs.Invalid("format", "must be jsonl or csv")
	}
	if _, ok := outcomes[q.Outcome]; q.Outcome != "" && !ok {
		return errs.Invalid("outcome", "must be one of accept, decline, cancel, resolved, expired, abandoned")
	}
	if !q.From.IsZero() && !q.To.IsZero() && !q.From.Before(q.To) {
		return errs.Invalid("to", "must be after from")
	}
	return nil
}

// Scope turns q into a filter limited to what user may read: the rows of session trees
// on which user holds at least read access (every tree when auth is off). A session
// the user cannot read is not found, as everywhere else. Call it before writing
// anything, so refusals are ordinary error answers.
func (s *Service) Scope(ctx context.Context, user string, q Query) (Filter, error) {
	f := Filter{From: q.From, To: q.To, Person: q.Person, Outcome: q.Outcome}
	if q.Session != "" {
		sess, err := s.store.GetSession(ctx, q.Session)
		if err != nil {
			return f, err
		}
		if _, err := s.access.Require(ctx, sess.RootID, user, auth.Read); err != nil {
			return f, err
		}
		f.SessionPath = sess.Path
		return f, nil
	}
	if s.access.SeesAll(user) {
		return f, nil
	}
	roots, err := s.store.ListRootsVisibleTo(ctx, user)
	if err != nil {
		return f, err
	}
	f.RootIDs = []string{}
	for _, r := range roots {
		lvl, err := s.access.LevelOn(ctx, r.ID, user)
		if err != nil {
			return f, err
		}
		if lvl >= auth.Read {
			f.RootIDs = append(f.RootIDs, r.ID)
		}
	}
	return f, nil
}

// Flusher pushes what was written so far to the client.
type Flusher interface{ Flush() }

// Write streams every chain row matching f to w in format, in chain order, a page at a
// time, flushing after each page: memory stays constant however many rows match. It
// returns how many rows it wrote. An error after the first write leaves a truncated
// export; the caller must make that visible (abort the response).
func (s *Service) Write(ctx context.Context, f Filter, format string, w io.Writer, flush Flusher) (int64, error) {
	enc := newEncoder(format, w)
	if err := enc.header(); err != nil {
		return 0, err
	}
	var n, after int64
	for {
		page, err := s.store.ExportPage(ctx, f, after, pageSize)
		if err != nil {
			return n, err
		}
		for i := range page {
			if err := enc.row(&page[i]); err != nil {
				return n, err
			}
			n++
		}
		if err := enc.flush(); err != nil {
			return n, err
		}
		if flush != nil {
			flush.Flush()
		}
		if len(page) < pageSize {
			return n, nil
		}
		after = page[len(page)-1].Seq
		if err := ctx.Err(); err != nil {
			return n, err
		}
	}
}

// Columns are the export's fields, in CSV column order (CSV cannot tell NULL from
// empty; JSON Lines can, and re-hash as they stand: see Row.Expected).
var Columns = []string{"seq", "elicitation_id", "session_id", "origin", "status", "action", "resolved_by",
	"resolved_via", "rule_id", "resolved_at", "created_at", "params", "content", "prev_hash", "hash",
	"version", "backfilled", "expires_at", "call_key"}

// Row is one exported decision: everything the hash covers, plus the links. Nullable
// columns are pointers: a NULL is JSON null (or, for action, rule_id, call_key and
// content, left out), so a row re-hashes exactly.
type Row struct {
	Seq           int64           `json:"seq"`
	Version       int             `json:"version"`
	Backfilled    bool            `json:"backfilled,omitempty"`
	ElicitationID string          `json:"elicitation_id"`
	SessionID     string          `json:"session_id"`
	Origin        string          `json:"origin"`
	Status        string          `json:"status"`
	Action        *string         `json:"action,omitempty"`
	ResolvedBy    *string         `json:"resolved_by"`
	ResolvedVia   *string         `json:"resolved_via"`
	RuleID        *string         `json:"rule_id,omitempty"`
	CallKey       *string         `json:"call_key,omitempty"`
	ResolvedAt    *string         `json:"resolved_at"`
	CreatedAt     string          `json:"created_at"`
	ExpiresAt     string          `json:"expires_at"`
	Params        json.RawMessage `json:"params"`
	Content       json.RawMessage `json:"content,omitempty"`
	PrevHash      string          `json:"prev_hash"`
	Hash          string          `json:"hash"`
}

// ToRow is r as exported. Times use the layout the hash uses, so an exported row can be
// re-hashed as it stands.
func ToRow(r *Record) Row {
	row := Row{Seq: r.Seq, Version: r.Version, Backfilled: r.Backfilled, ElicitationID: r.ElicitationID,
		SessionID: r.SessionID, Origin: r.Origin, Status: r.Status, Action: r.Action, ResolvedBy: r.ResolvedBy,
		ResolvedVia: r.ResolvedVia, RuleID: r.RuleID, CallKey: r.CallKey,
		CreatedAt: FormatTime(r.CreatedAt), ExpiresAt: FormatTime(r.ExpiresAt),
		Params: jsonOrNull(r.Params), Content: jsonOrNil(r.Content), PrevHash: r.PrevHash, Hash: r.Hash}
	if r.ResolvedAt != nil {
		at := FormatTime(*r.ResolvedAt)
		row.ResolvedAt = &at
	}
	return row
}

// Record is the exported row turned back into what was hashed (params and content
// as exported, which is byte for byte what was hashed).
func (row *Row) Record() (Record, error) {
	r := Record{Seq: row.Seq, PrevHash: row.PrevHash, Hash: row.Hash, Version: row.Version, Backfilled: row.Backfilled,
		Entry: Entry{ElicitationID: row.ElicitationID, SessionID: row.SessionID, Origin: row.Origin, Params: row.Params,
			Status: row.Status, Action: row.Action, ResolvedBy: row.ResolvedBy, ResolvedVia: row.ResolvedVia,
			RuleID: row.RuleID, CallKey: row.CallKey}}
	if row.Content != nil {
		r.Content = row.Content
	}
	var err error
	if row.ResolvedAt != nil {
		at, perr := time.Parse(TimeLayout, *row.ResolvedAt)
		r.ResolvedAt, err = &at, perr
	}
	for _, f := range []struct {
		dst *time.Time
		v   string
	}{{&r.CreatedAt, row.CreatedAt}, {&r.ExpiresAt, row.ExpiresAt}} {
		if t, perr := time.Parse(TimeLayout, f.v); perr != nil {
			err = perr
		} else {
			*f.dst = t
		}
	}
	return r, err
}

// Expected is the hash an exported row should carry, recomputed from the row alone —
// what an auditor does with an export, without Gatehouse's database.
func (row *Row) Expected() (string, error) {
	r, err := row.Record()
	if err != nil {
		return "", err
	}
	return r.Expected(row.PrevHash), nil
}

func jsonOrNull(b []byte) json.RawMessage {
	if len(b) == 0 || !json.Valid(b) {
		return json.RawMessage("null")
	}
	return b
}

func jsonOrNil(b []byte) json.RawMessage {
	if len(b) == 0 {
		return nil
	}
	return jsonOrNull(b)
}

// encoder writes rows as JSON Lines or CSV through one reused buffer.
type encoder struct {
	w   *bufio.Writer
	csv *csv.Writer
	rec []string
	buf []byte
}

func newEncoder(format string, w io.Writer) *encoder {
	bw := bufio.NewWriterSize(w, 64<<10)
	if format == FormatCSV {
		return &encoder{w: bw, csv: csv.NewWriter(bw), rec: make([]string, len(Columns))}
	}
	return &encoder{w: bw}
}

func (e *encoder) header() error {
	if e.csv != nil {
		return e.csv.Write(Columns)
	}
	return nil
}

// row writes one record. JSON Lines carry params and content as the JSON text that was
// hashed, byte for byte (not re-encoded), so an exported line can be re-hashed.
func (e *encoder) row(r *Record) error {
	row := ToRow(r)
	if e.csv != nil {
		v := e.rec
		v[0], v[1], v[2], v[3], v[4], v[5] = strconv.FormatInt(row.Seq, 10), row.ElicitationID, row.SessionID, row.Origin, row.Status, deref(row.Action)
		v[6], v[7], v[8], v[9], v[10] = deref(row.ResolvedBy), deref(row.ResolvedVia), deref(row.RuleID), deref(row.ResolvedAt), row.CreatedAt
		v[11], v[12], v[13], v[14] = string(r.Params), string(r.Content), row.PrevHash, row.Hash
		v[15], v[16], v[17], v[18] = strconv.Itoa(row.Version), strconv.FormatBool(row.Backfilled), row.ExpiresAt, deref(row.CallKey)
		return e.csv.Write(v)
	}
	b := append(e.buf[:0], `{"seq":`...)
	b = strconv.AppendInt(b, row.Seq, 10)
	b = append(b, `,"version":`...)
	b = strconv.AppendInt(b, int64(row.Version), 10)
	if row.Backfilled {
		b = append(b, `,"backfilled":true`...)
	}
	b = appendField(b, "elicitation_id", row.ElicitationID)
	b = appendField(b, "session_id", row.SessionID)
	b = appendField(b, "origin", row.Origin)
	b = appendField(b, "status", row.Status)
	if row.Action != nil {
		b = appendField(b, "action", *row.Action)
	}
	b = appendNullable(b, "resolved_by", row.ResolvedBy)
	b = appendNullable(b, "resolved_via", row.ResolvedVia)
	if row.RuleID != nil {
		b = appendField(b, "rule_id", *row.RuleID)
	}
	if row.CallKey != nil {
		b = appendField(b, "call_key", *row.CallKey)
	}
	b = appendNullable(b, "resolved_at", row.ResolvedAt)
	b = appendField(b, "created_at", row.CreatedAt)
	b = appendField(b, "expires_at", row.ExpiresAt)
	b = appendRaw(b, "params", row.Params)
	if row.Content != nil {
		b = appendRaw(b, "content", row.Content)
	}
	b = appendField(b, "prev_hash", row.PrevHash)
	b = appendField(b, "hash", row.Hash)
	b = append(b, "}\n"...)
	e.buf = b
	_, err := e.w.Write(b)
	return err
}

// appendNullable appends a string field, or null.
func appendNullable(b []byte, key string, val *string) []byte {
	if val == nil {
		b = append(b, `,"`...)
		b = append(b, key...)
		return append(b, `":null`...)
	}
	return appendField(b, key, *val)
}

func appendField(b []byte, key, val string) []byte {
	b = append(b, `,"`...)
	b = append(b, key...)
	b = append(b, `":`...)
	return appendString(b, val)
}

// appendRaw appends JSON text as is, unless it spans lines (which would break JSON
// Lines): then compacted.
func appendRaw(b []byte, key string, raw json.RawMessage) []byte {
	b = append(b, `,"`...)
	b = append(b, key...)
	b = append(b, `":`...)
	if bytes.ContainsAny(raw, "\r\n") {
		var c bytes.Buffer
		if json.Compact(&c, raw) == nil {
			return append(b, c.Bytes()...)
		}
		return append(b, "null"...)
	}
	return append(b, raw...)
}

// appendString appends s as a JSON string: plain ASCII directly, anything else through
// encoding/json.
func appendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x80 || c == '"' || c == '\\' {
			q, _ := json.Marshal(s)
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

func (e *encoder) flush() error {
	if e.csv != nil {
		e.csv.Flush()
		if err := e.csv.Error(); err != nil {
			return err
		}
	}
	return e.w.Flush()
}
