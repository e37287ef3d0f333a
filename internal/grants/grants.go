// Package grants is the one-shot retry grant: when an agent's own check refuses a tool
// call (Claude Code's auto mode, through its PermissionDenied hook) and a person
// approves it in Gatehouse, the agent may make exactly that call once more, and its
// PreToolUse hook is answered "allow" — once. A grant is bound to the session, the tool
// and the tool's input as canonical JSON; it lives a few minutes (TTL, at most MaxTTL)
// and is spent by one conditional update in the database, so any replica honours it and
// no two requests spend it both. Anything else about the retry — another input, a
// second use, a late one — finds no grant and is handled as if none had been made.
package grants

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/ids"
	"github.com/gatehouse-dev/gatehouse/models"
)

// Store is the persistence grants need (internal/store implements it).
type Store interface {
	// InsertRetryGrant stores g unless its prompt has a grant already; stored reports
	// which.
	InsertRetryGrant(ctx context.Context, g *models.RetryGrant) (stored bool, err error)
	// ConsumeRetryGrant spends the live grant for the call at now, atomically; nil
	// when there is none.
	ConsumeRetryGrant(ctx context.Context, sessionID, tool, inputHash string, now time.Time) (*models.RetryGrant, error)
}

// TTL bounds: a grant is for the retry the agent makes right after the approval, not
// for later.
const (
	DefaultTTL = 5 * time.Minute
	MaxTTL     = 10 * time.Minute
)

// IDPrefix starts every grant id.
const IDPrefix = "grant_"

// Call is the tool call a grant is for.
type Call struct {
	// Session is the Gatehouse session the call parks on.
	Session string
	// Tool is the agent's tool name; Input its input as the hook sent it.
	Tool  string
	Input map[string]any
}

// Service grants and spends retry grants.
type Service struct {
	store Store
	ttl   time.Duration
	now   func() time.Time
}

// New returns a Service whose grants live ttl (DefaultTTL when zero or less, MaxTTL at
// most), timed by now (time.Now when nil).
func New(st Store, ttl time.Duration, now func() time.Time) *Service {
	if ttl <= 0 {
		ttl = DefaultTTL
	}
	ttl = min(ttl, MaxTTL)
	if now == nil {
		now = time.Now
	}
	return &Service{store: st, ttl: ttl, now: now}
}

// Grant records that by approved prompt eid, which escalated c: c may be made once
// more within the TTL. A prompt granted already keeps its one grant.
func (s *Service) Grant(ctx context.Context, eid, by string, c Call) error {
	now := s.now().UTC()
	_, err := s.store.InsertRetryGrant(ctx, &models.RetryGrant{ID: ids.New(IDPrefix), ElicitationID: eid,
		SessionID: c.Session, ToolName: c.Tool, InputHash: InputHash(c.Input), GrantedBy: by,
		CreatedAt: now, ExpiresAt: now.Add(s.ttl)})
	return err
}

// Consume spends the grant for c, if there is a live one, and returns it; nil when
// there is none — the call is then handled as if no grant had ever been made.
func (s *Service) Consume(ctx context.Context, c Call) (*models.RetryGrant, error) {
	return s.store.ConsumeRetryGrant(ctx, c.Session, c.Tool, InputHash(c.Input), s.now().UTC())
}

// InputHash is the hex SHA-256 of input as canonical JSON: keys sorted at every level
// (encoding/json sorts map keys), numbers as the agent wrote them (hook inputs are
// decoded with json.Number), no insignificant space. Two inputs hash alike only when
// they say the same thing.
func InputHash(input map[string]any) string {
	if input == nil {
		input = map[string]any{}
	}
	raw, err := json.Marshal(input)
	if err != nil {
		// A decoded JSON object always marshals; hash something no input can equal.
		raw = []byte("\x00unmarshalable")
	}
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:])
}
