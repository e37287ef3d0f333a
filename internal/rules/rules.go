// Package rules is Gatehouse's own rules: "always allow / always
// deny this — a tool and a pattern over its input — for this session tree, this agent,
// this project directory or everywhere, for an hour, a day or until revoked", and ask
// rules that park with their own wait and answer when it runs out.
//
// A rule answers only what the person who made it could have answered: at match time
// its creator must still hold edit access on the request's session tree. The store
// keeps the live rules in memory while that is as right as reading them (see
// LiveRulesForTool): a rule made or revoked applies to this replica's next request, and
// to another replica's as soon as it hears the change's note.
package rules

import (
	"context"
	"errors"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/auth"
	"github.com/gatehouse-dev/gatehouse/internal/elicit"
	"github.com/gatehouse-dev/gatehouse/internal/errs"
	"github.com/gatehouse-dev/gatehouse/internal/ids"
	"github.com/gatehouse-dev/gatehouse/internal/sessions"
	"github.com/gatehouse-dev/gatehouse/models"
)

// Scope kinds: where a rule applies.
const (
	// ScopeSession: the session tree (root and every sub-agent) of the session named.
	ScopeSession = "session"
	// ScopeAgent: every session run under the agent named.
	ScopeAgent = "agent"
	// ScopeCwd: requests whose working directory is the directory named or lies below it.
	ScopeCwd = "cwd"
	// ScopeGlobal: everywhere its creator may decide.
	ScopeGlobal = "global"
)

// Answers when an ask rule's wait runs out.
const (
	OnTimeoutNone  = "none"
	OnTimeoutDeny  = "deny"
	OnTimeoutAllow = "allow"
)

// IDPrefix starts every rule id.
const IDPrefix = "rule_"

// Store is the persistence rules need (internal/store implements it). A rule that
// does not exist is errs.ErrNotFound.
type Store interface {
	InsertRule(ctx context.Context, r *models.Rule) error
	GetRule(ctx context.Context, id string) (*models.Rule, error)
	// LiveRulesForTool lists tool's rules neither revoked nor expired at now, oldest
	// first, without fire counts; a change made on this replica applies at once, one
	// made on another as soon as this replica hears of it.
	LiveRulesForTool(ctx context.Context, tool string, now time.Time) ([]models.Rule, error)
	ListRules(ctx context.Context, f models.RuleFilter, limit int) ([]models.Rule, error)
	// RevokeRule stamps the rule revoked unless it already is; false when it was.
	RevokeRule(ctx context.Context, id, by string, at time.Time) (bool, error)
	// RuleFired counts an ask rule's fire; an allow or deny rule's is counted with the
	// decision it made (elicit's DecideElicitation, models.ViaRule).
	RuleFired(ctx context.Context, id string, at time.Time) error
	ListRootsVisibleTo(ctx context.Context, user string) ([]models.Session, error)
	ListPermissions(ctx context.Context, rootID string) ([]models.Permission, error)
}

// Service is the rules use case.
type Service struct {
	store    Store
	sessions *sessions.Service
	access   *auth.Checker
	elicit   *elicit.Service
	now      func() time.Time
	// compiled caches matchers by rule id: a rule's kind and pattern never change.
	compiled sync.Map
}

// New builds the service.
func New(st Store, sess *sessions.Service, access *auth.Checker, core *elicit.Service) *Service {
	return &Service{store: st, sessions: sess, access: access, elicit: core, now: func() time.Time { return time.Now().UTC() }}
}

// Match is the body's "match": how the pattern is compared with the request's target.
type Match struct {
	Kind    string `json:"kind"`
	Pattern string `json:"pattern"`
	// Argument, for an MCP or other tool, names the one argument the pattern is
	// compared with (otherwise: the whole input as canonical JSON).
	Argument string `json:"argument,omitempty"`
}

// Scope is the body's "scope".
type Scope struct {
	Kind  string `json:"kind"`
	Value string `json:"value"`
}

// Input is the body of POST /v1/rules.
type Input struct {
	Effect string `json:"effect"`
	Tool   string `json:"tool"`
	Match  *Match `json:"match"`
	Scope  *Scope `json:"scope"`
	// ExpiresAt (RFC 3339) or ExpiresIn (a duration: "1h", "24h") end the rule; with
	// neither an allow rule lasts DefaultAllowLifetime and a deny or ask rule until
	// revoked.
	ExpiresAt string `json:"expires_at"`
	ExpiresIn string `json:"expires_in"`
	// Timeout ("5m") and OnTimeout (none, deny, allow) are an ask rule's wait and the
	// answer when it runs out.
	Timeout   string `json:"timeout"`
	OnTimeout string `json:"on_timeout"`
	Note      string `json:"note"`
}

// View is a rule as the API and pages show it.
type View struct {
	ID          string     `json:"id"`
	Effect      string     `json:"effect"`
	Tool        string     `json:"tool"`
	Match       Match      `json:"match"`
	Scope       Scope      `json:"scope"`
	Timeout     string     `json:"timeout,omitempty"`
	OnTimeout   string     `json:"on_timeout,omitempty"`
	Note        string     `json:"note,omitempty"`
	State       string     `json:"state"`
	CreatedBy   string     `json:"created_by"`
	CreatedAt   time.Time  `json:"created_at"`
	ExpiresAt   *time.Time `json:"expires_at"`
	RevokedAt   *time.Time `json:"revoked_at,omitempty"`
	RevokedBy   string     `json:"revoked_by,omitempty"`
	FireCount   int64      `json:"fire_count"`
	LastFiredAt *time.Time `json:"last_fired_at"`
}

// States of a rule.
const (
	StateActive  = "active"
	StateExpired = "expired"
	StateRevoked = "revoked"
)

// ViewOf describes r as of now.
func ViewOf(r *models.Rule, now time.Time) View {
	v := View{ID: r.ID, Effect: r.Effect, Tool: r.Tool, Match: Match{Kind: r.MatchKind, Pattern: r.Pattern, Argument: r.MatchArgument},
		Scope: Scope{Kind: r.ScopeKind, Value: r.ScopeValue}, OnTimeout: r.OnTimeout, Note: r.Note,
		CreatedBy: r.CreatedBy, CreatedAt: r.CreatedAt, ExpiresAt: r.ExpiresAt, RevokedAt: r.RevokedAt,
		FireCount: r.FireCount, LastFiredAt: r.LastFiredAt, State: StateActive}
	if r.TimeoutSeconds > 0 {
		v.Timeout = (time.Duration(r.TimeoutSeconds) * time.Second).String()
	}
	if r.RevokedBy != nil {
		v.RevokedBy = *r.RevokedBy
	}
	switch {
	case r.RevokedAt != nil:
		v.State = StateRevoked
	case !r.Live(now):
		v.State = StateExpired
	}
	return v
}

// MayMakeGlobal reports whether user may make a global rule (admins, or anyone when
// auth is off).
func (s *Service) MayMakeGlobal(user string) bool { return s.access.SeesAll(user) }

// Now is the service's clock.
func (s *Service) Now() time.Time { return s.now() }

// Create validates in and stores the rule as user's. Every problem is a 400 naming the
// field: a pattern that does not compile, a scope naming nothing user may manage, an
// expiry in the past.
func (s *Service) Create(ctx context.Context, user string, in Input) (*models.Rule, error) {
	now := s.now()
	r := &models.Rule{ID: ids.New(IDPrefix), CreatedBy: user, CreatedAt: now}
	switch in.Effect {
	case models.EffectAllow, models.EffectDeny, models.EffectAsk:
		r.Effect = in.Effect
	case "":
		return nil, errs.Invalid("effect", "is required (allow, deny or ask)")
	default:
		return nil, errs.Invalid("effect", "must be allow, deny or ask, not %q", clip(in.Effect))
	}
	r.Tool = strings.TrimSpace(in.Tool)
	if r.Tool == "" {
		return nil, errs.Invalid("tool", "is required (the tool's name, e.g. Bash)")
	}
	if len(r.Tool) > 200 {
		return nil, errs.Invalid("tool", "is longer than 200 characters")
	}
	if in.Match == nil {
		return nil, errs.Invalid("match", "is required: {\"kind\": exact|prefix|glob|regex, \"pattern\": …}")
	}
	switch in.Match.Kind {
	case MatchExact, MatchPrefix, MatchGlob, MatchRegex:
	case "":
		return nil, errs.Invalid("match.kind", "is required (exact, prefix, glob or regex)")
	default:
		return nil, errs.Invalid("match.kind", "must be exact, prefix, glob or regex, not %q", clip(in.Match.Kind))
	}
	if in.Match.Pattern == "" {
		return nil, errs.Invalid("match.pattern", "is required")
	}
	if len(in.Match.Pattern) > MaxPattern {
		return nil, errs.Invalid("match.pattern", "is longer than %d bytes", MaxPattern)
	}
	arg := strings.TrimSpace(in.Match.Argument)
	if len(arg) > 200 {
		return nil, errs.Invalid("match.argument", "is longer than 200 characters")
	}
	if _, err := compileRule(r.Tool, in.Match.Kind, in.Match.Pattern, arg); err != nil {
		field := "match.pattern"
		if strings.HasPrefix(err.Error(), "match.argument") {
			field = "match.argument"
		}
		return nil, errs.Invalid(field, "does not compile as a %s: %v", in.Match.Kind, err)
	}
	r.MatchKind, r.Pattern, r.MatchArgument = in.Match.Kind, in.Match.Pattern, arg
	if err := s.scope(ctx, user, in.Scope, r); err != nil {
		return nil, err
	}
	if err := expiry(in, now, r); err != nil {
		return nil, err
	}
	if err := s.timeout(in, r); err != nil {
		return nil, err
	}
	if strictReading(r.Effect, r.OnTimeout) {
		if err := checkAllowPattern(r.Tool, r.MatchKind, r.Pattern); err != nil {
			return nil, errs.Invalid("match.pattern", "%v", err)
		}
	}
	if len(in.Note) > 1000 {
		return nil, errs.Invalid("note", "is longer than 1000 characters")
	}
	r.Note = in.Note
	if err := s.store.InsertRule(ctx, r); err != nil {
		return nil, err
	}
	return r, nil
}

// scope checks the scope names something user may manage and stores its value: a
// session tree user holds edit access on (the level that decides its prompts; stored
// as its root), an agent user can see, an absolute directory, or nothing (everywhere).
func (s *Service) scope(ctx context.Context, user string, in *Scope, r *models.Rule) error {
	if in == nil {
		return errs.Invalid("scope", "is required: {\"kind\": session|agent|cwd|global, \"value\": …}")
	}
	v := strings.TrimSpace(in.Value)
	switch in.Kind {
	case ScopeSession:
		if v == "" {
			return errs.Invalid("scope.value", "is required for a session scope (a session id)")
		}
		sess, err := s.sessions.Authorize(ctx, user, v, auth.Edit)
		if err != nil {
			if errors.Is(err, errs.ErrNotFound) || errors.Is(err, errs.ErrForbidden) {
				return errs.Invalid("scope.value", "names no session you may manage (rules need edit access to the session)")
			}
			return err
		}
		r.ScopeValue = sess.RootID
	case ScopeAgent:
		if v == "" {
			return errs.Invalid("scope.value", "is required for an agent scope (an agent id)")
		}
		if _, err := s.sessions.GetAgent(ctx, user, v); err != nil {
			if errors.Is(err, errs.ErrNotFound) {
				return errs.Invalid("scope.value", "names no agent you may manage")
			}
			return err
		}
		r.ScopeValue = v
	case ScopeCwd:
		if !strings.HasPrefix(v, "/") {
			return errs.Invalid("scope.value", "must be an absolute directory (starting with /) for a cwd scope")
		}
		if len(v) > 4096 {
			return errs.Invalid("scope.value", "is longer than 4096 bytes")
		}
		r.ScopeValue = path.Clean(v)
	case ScopeGlobal:
		if v != "" {
			return errs.Invalid("scope.value", "must be empty for a global scope")
		}
		// A global rule answers in every session its creator may edit, including
		// sessions of people who never chose it: only admins make them.
		if !s.access.SeesAll(user) {
			return errs.Forbidden("only admins make global rules; scope the rule to a session, an agent or a project directory")
		}
	case "":
		return errs.Invalid("scope.kind", "is required (session, agent, cwd or global)")
	default:
		return errs.Invalid("scope.kind", "must be session, agent, cwd or global, not %q", clip(in.Kind))
	}
	r.ScopeKind = in.Kind
	return nil
}

// DefaultAllowLifetime is how long an allow rule made without an expiry lasts. Every
// allow rule ends: a grant nobody remembers making should not answer forever.
const DefaultAllowLifetime = 30 * 24 * time.Hour

// expiry sets r's expiry from expires_at or expires_in (an allow rule given neither gets
// DefaultAllowLifetime); one in the past is refused.
func expiry(in Input, now time.Time, r *models.Rule) error {
	switch {
	case in.ExpiresAt == "" && in.ExpiresIn == "" && r.Effect == models.EffectAllow:
		t := now.Add(DefaultAllowLifetime)
		r.ExpiresAt = &t
	case in.ExpiresAt != "" && in.ExpiresIn != "":
		return errs.Invalid("expires_in", "give expires_at or expires_in, not both")
	case in.ExpiresAt != "":
		t, err := time.Parse(time.RFC3339, in.ExpiresAt)
		if err != nil {
			return errs.Invalid("expires_at", "must be an RFC 3339 time (2026-01-02T15:04:05Z)")
		}
		if !t.After(now) {
			return errs.Invalid("expires_at", "is in the past")
		}
		t = t.UTC()
		r.ExpiresAt = &t
	case in.ExpiresIn != "":
		d, err := time.ParseDuration(in.ExpiresIn)
		if err != nil {
			return errs.Invalid("expires_in", "must be a duration such as 1h or 24h")
		}
		if d <= 0 {
			return errs.Invalid("expires_in", "must be positive (an expiry in the past)")
		}
		t := now.Add(d)
		r.ExpiresAt = &t
	}
	return nil
}

// timeout sets an ask rule's wait and timeout answer.
func (s *Service) timeout(in Input, r *models.Rule) error {
	if in.Timeout == "" && in.OnTimeout == "" {
		return nil
	}
	if r.Effect != models.EffectAsk {
		field := "timeout"
		if in.Timeout == "" {
			field = "on_timeout"
		}
		return errs.Invalid(field, "applies to ask rules only (allow and deny answer at once)")
	}
	if in.Timeout != "" {
		d, err := time.ParseDuration(in.Timeout)
		if err != nil || d < time.Second {
			return errs.Invalid("timeout", "must be a duration of at least 1s, such as 30s or 5m")
		}
		if max := s.elicit.Timeout(); d > max {
			return errs.Invalid("timeout", "is longer than the server's longest wait (%s)", max)
		}
		r.TimeoutSeconds = int64(d / time.Second)
	}
	switch in.OnTimeout {
	case "", OnTimeoutNone, OnTimeoutDeny, OnTimeoutAllow:
		r.OnTimeout = in.OnTimeout
	default:
		return errs.Invalid("on_timeout", "must be none, deny or allow, not %q", clip(in.OnTimeout))
	}
	return nil
}

// List returns the rules user may see, newest first: their own and every rule that can
// answer in a session tree they manage, wherever it was made (every rule when auth is
// off or user is an admin).
func (s *Service) List(ctx context.Context, user string) ([]models.Rule, error) {
	if s.access.SeesAll(user) {
		return s.store.ListRules(ctx, models.RuleFilter{All: true}, 1000)
	}
	rc, err := s.reachOf(ctx, user)
	if err != nil {
		return nil, err
	}
	return s.store.ListRules(ctx, models.RuleFilter{User: user, Roots: rc.roots, Agents: rc.agents,
		Editors: rc.editors, AnyEditor: rc.anyEditor}, 1000)
}

// Get loads a rule user may see (anyone else's is not found).
func (s *Service) Get(ctx context.Context, user, id string) (*models.Rule, error) {
	if !strings.HasPrefix(id, IDPrefix) || len(id) > 64 {
		return nil, errs.NotFound("rule not found")
	}
	r, err := s.store.GetRule(ctx, id)
	if errors.Is(err, errs.ErrNotFound) {
		return nil, errs.NotFound("rule not found")
	}
	if err != nil {
		return nil, err
	}
	ok, err := s.mayManage(ctx, user, r)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, errs.NotFound("rule not found")
	}
	return r, nil
}

// Revoke ends a rule at once, on every replica (the next match reads the row). Revoking
// a revoked rule is not an error.
func (s *Service) Revoke(ctx context.Context, user, id string) (*models.Rule, error) {
	if _, err := s.Get(ctx, user, id); err != nil {
		return nil, err
	}
	if _, err := s.store.RevokeRule(ctx, id, user, s.now()); err != nil {
		return nil, err
	}
	return s.store.GetRule(ctx, id)
}

// mayManage: an admin, the rule's creator, or an owner or manager of a session tree
// the rule can answer in — so nobody with edit access can plant a rule in someone
// else's sessions that the owner cannot see or revoke.
func (s *Service) mayManage(ctx context.Context, user string, r *models.Rule) (bool, error) {
	if s.access.SeesAll(user) || r.CreatedBy == user {
		return true, nil
	}
	rc, err := s.reachOf(ctx, user)
	if err != nil {
		return false, err
	}
	return rc.answersIn(r), nil
}

// reach is what a person manages: the session trees they hold manage (or owner) access
// on, the agents those run under, and the people who may edit them — whose rules can
// answer there (a rule answers only where its creator may decide).
type reach struct {
	roots, agents, editors []string
	// anyEditor: some managed tree lets everyone signed in edit, so anyone's rule can
	// answer there.
	anyEditor bool
}

func (s *Service) reachOf(ctx context.Context, user string) (reach, error) {
	var rc reach
	visible, err := s.store.ListRootsVisibleTo(ctx, user)
	if err != nil {
		return rc, err
	}
	seen := map[string]bool{}
	agents := map[string]bool{}
	for _, root := range visible {
		lvl, err := s.access.LevelOn(ctx, root.ID, user)
		if err != nil {
			return rc, err
		}
		if lvl < auth.Manage {
			continue
		}
		rc.roots = append(rc.roots, root.ID)
		if root.AgentID != "" && !agents[root.AgentID] {
			agents[root.AgentID] = true
			rc.agents = append(rc.agents, root.AgentID)
		}
		grants, err := s.store.ListPermissions(ctx, root.ID)
		if err != nil {
			return rc, err
		}
		for _, g := range grants {
			if auth.Level(g.Level) < auth.Edit {
				continue
			}
			if g.User == auth.PublicUser {
				rc.anyEditor = true
			} else if !seen[g.User] {
				seen[g.User] = true
				rc.editors = append(rc.editors, g.User)
			}
		}
	}
	return rc, nil
}

// answersIn reports whether r can answer in one of the managed trees: the same test
// the store's RuleFilter makes in SQL.
func (rc reach) answersIn(r *models.Rule) bool {
	editor := rc.anyEditor || contains(rc.editors, r.CreatedBy)
	switch r.ScopeKind {
	case ScopeSession:
		return contains(rc.roots, r.ScopeValue)
	case ScopeAgent:
		return editor && contains(rc.agents, r.ScopeValue)
	case ScopeCwd, ScopeGlobal:
		return editor
	}
	return false
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func clip(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}
