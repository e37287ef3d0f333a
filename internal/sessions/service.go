// Package sessions manages agents, the session tree and grants, and answers the one
// question every route asks first: may this user do this to this session?
package sessions

import (
	"context"
	"encoding/json"
	"errors"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gatehouse-dev/gatehouse/internal/auth"
	"github.com/gatehouse-dev/gatehouse/internal/errs"
	"github.com/gatehouse-dev/gatehouse/internal/ids"
	"github.com/gatehouse-dev/gatehouse/models"
)

// Store is the persistence sessions need (internal/store implements it). A lookup of a
// row that does not exist is errs.ErrNotFound.
type Store interface {
	CreateAgent(ctx context.Context, a *models.Agent) error
	GetAgent(ctx context.Context, id string) (*models.Agent, error)
	FindAgentByName(ctx context.Context, user, name string) (*models.Agent, error)
	ListAgents(ctx context.Context, user string) ([]models.Agent, error)
	// CreateSession inserts a session, and the owner grant when it is top level, in
	// one transaction; a duplicate child title is errs.ErrConflict.
	CreateSession(ctx context.Context, sess *models.Session, owner *models.Permission) error
	GetSession(ctx context.Context, id string) (*models.Session, error)
	FindSessionByExternal(ctx context.Context, user, external string) (*models.Session, error)
	FindChildByTitle(ctx context.Context, parent, title string) (*models.Session, error)
	Ancestors(ctx context.Context, sess *models.Session) ([]models.Session, error)
	Descendants(ctx context.Context, sess *models.Session) ([]models.Session, error)
	ListChildren(ctx context.Context, parent string) ([]models.Session, error)
	ListRootsVisibleTo(ctx context.Context, user string) ([]models.Session, error)
	CountPendingInSubtrees(ctx context.Context, ids []string) (map[string]int, error)
	GrantLevel(ctx context.Context, rootID, user string) (int, error)
	ListPermissions(ctx context.Context, rootID string) ([]models.Permission, error)
	PutPermission(ctx context.Context, p *models.Permission) error
	DeletePermission(ctx context.Context, rootID, user string) (bool, error)
}

// Service is the session and agent API's domain.
type Service struct {
	store  Store
	access *auth.Checker
	now    func() time.Time
	// grantChanged is told, after commit, of every grant created, changed or removed.
	grantChanged func(root, user string)
}

// New builds the service.
func New(st Store, access *auth.Checker) *Service {
	return &Service{store: st, access: access, now: func() time.Time { return time.Now().UTC() }}
}

// OnGrantChanged registers f to be told, after the change has committed, whenever a
// grant on a tree is created (a new top-level session's owner), changed or removed.
// The wiring passes the bus's GrantChanged, so open streams of that person re-check
// their access at once, on every replica. Set once, before serving.
func (s *Service) OnGrantChanged(f func(root, user string)) { s.grantChanged = f }

func (s *Service) announceGrant(root, user string) {
	if s.grantChanged != nil {
		s.grantChanged(root, user)
	}
}

// AgentInput is the body of POST /v1/agents.
type AgentInput struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Config      json.RawMessage `json:"config"`
}

// CreateAgent registers an agent owned by user.
func (s *Service) CreateAgent(ctx context.Context, user string, in AgentInput) (*models.Agent, error) {
	name := strings.TrimSpace(in.Name)
	if name == "" {
		return nil, errs.Invalid("name", "is required")
	}
	if len(name) > 200 {
		return nil, errs.Invalid("name", "is longer than 200 characters")
	}
	if len(in.Config) > 0 && string(in.Config) != "null" {
		var obj map[string]any
		if err := json.Unmarshal(in.Config, &obj); err != nil {
			return nil, errs.Invalid("config", "must be a JSON object")
		}
	} else {
		in.Config = json.RawMessage(`{}`)
	}
	now := s.now()
	a := &models.Agent{ID: ids.New(ids.AgentPrefix), Name: name, Description: in.Description,
		Config: in.Config, CreatedBy: user, CreatedAt: now, UpdatedAt: now}
	return a, s.store.CreateAgent(ctx, a)
}

// GetAgent loads an agent. Agents are visible to their creator (everyone when auth is off).
func (s *Service) GetAgent(ctx context.Context, user, id string) (*models.Agent, error) {
	if !ids.ValidAgent(id) {
		return nil, errs.NotFound("agent not found")
	}
	a, err := s.store.GetAgent(ctx, id)
	if errors.Is(err, errs.ErrNotFound) || (err == nil && !s.access.SeesAll(user) && a.CreatedBy != user) {
		return nil, errs.NotFound("agent not found")
	}
	return a, err
}

// ListAgents lists the agents user can see.
func (s *Service) ListAgents(ctx context.Context, user string) ([]models.Agent, error) {
	if s.access.SeesAll(user) {
		user = ""
	}
	return s.store.ListAgents(ctx, user)
}

// SessionInput is the body of POST /v1/sessions.
type SessionInput struct {
	AgentID         string `json:"agent_id"`
	Title           string `json:"title"`
	ParentSessionID string `json:"parent_session_id"`
	// ExternalSessionID ties the session to an external id (Claude Code's session_id).
	ExternalSessionID string `json:"-"`
}

// MaxDepth is how deep sub-agent sessions may nest below their root. The bound keeps
// every tree query and index entry small: a session's materialized path grows by one id
// per level, and Postgres refuses a b-tree index entry over about 2.7 KB (a depth of
// ~70), which would otherwise surface as a 500. Real agents nest a handful deep.
const MaxDepth = 32

// CreateSession creates a top-level session owned by user, or a sub-agent session under
// a parent the user can edit. Read access is not enough: a sub-agent parks prompts that
// show on every ancestor's stream and inbox, so a read-only viewer of someone else's
// tree must not be able to add to it.
func (s *Service) CreateSession(ctx context.Context, user string, in SessionInput) (*models.Session, error) {
	if strings.TrimSpace(in.AgentID) == "" {
		return nil, errs.Invalid("agent_id", "is required")
	}
	if len(in.Title) > 500 {
		return nil, errs.Invalid("title", "is longer than 500 characters")
	}
	if _, err := s.GetAgent(ctx, user, in.AgentID); err != nil {
		if s.access.Mode.PerPerson() && in.ParentSessionID != "" && errors.Is(err, errs.ErrNotFound) {
			// A sub-agent may run under its parent's agent, even when someone else
			// registered it (the parent's access is checked below); not under any other
			// user's agent.
			if parent, err2 := s.store.GetSession(ctx, in.ParentSessionID); err2 == nil && parent.AgentID == in.AgentID {
				err = nil
			}
		}
		if err != nil {
			return nil, err
		}
	}
	now := s.now()
	sess := &models.Session{ID: ids.New(ids.SessionPrefix), AgentID: in.AgentID, Title: in.Title,
		CreatedBy: user, CreatedAt: now, UpdatedAt: now}
	if in.ExternalSessionID != "" {
		ext := in.ExternalSessionID
		sess.ExternalSessionID = &ext
	}
	var owner *models.Permission
	if in.ParentSessionID == "" {
		sess.Kind = models.KindDefault
		sess.RootID = sess.ID
		sess.Path = "/" + sess.ID + "/"
		owner = &models.Permission{SessionID: sess.ID, User: user, Level: int(auth.Owner), CreatedAt: now}
	} else {
		parent, err := s.Authorize(ctx, user, in.ParentSessionID, auth.Edit)
		if err != nil {
			return nil, err
		}
		if parent.Depth+1 > MaxDepth {
			return nil, errs.Validation("parent_session_id", "sessions nest at most %d levels deep", MaxDepth)
		}
		sess.Kind = models.KindSubAgent
		sess.ParentID = &parent.ID
		sess.RootID = parent.RootID
		sess.Path = parent.Path + sess.ID + "/"
		sess.Depth = parent.Depth + 1
	}
	if err := s.store.CreateSession(ctx, sess, owner); err != nil {
		if errors.Is(err, errs.ErrConflict) {
			return nil, errs.Conflict("a sibling session already has the title %q", in.Title)
		}
		return nil, err
	}
	if owner != nil {
		// The creator's inbox streams follow the new tree from now on.
		s.announceGrant(owner.SessionID, owner.User)
	}
	return sess, nil
}

// Authorize loads session id and checks that user holds need on its tree. Malformed and
// unknown ids, and sessions the user cannot see at all, are all "not found".
func (s *Service) Authorize(ctx context.Context, user, id string, need auth.Level) (*models.Session, error) {
	sess, _, err := s.AuthorizeLevel(ctx, user, id, need)
	return sess, err
}

// AuthorizeLevel is Authorize that also reports the level the user holds.
func (s *Service) AuthorizeLevel(ctx context.Context, user, id string, need auth.Level) (*models.Session, auth.Level, error) {
	if !ids.ValidSession(id) {
		return nil, auth.None, errs.NotFound("session not found")
	}
	sess, err := s.store.GetSession(ctx, id)
	if errors.Is(err, errs.ErrNotFound) {
		return nil, auth.None, errs.NotFound("session not found")
	}
	if err != nil {
		return nil, auth.None, err
	}
	have, err := s.access.Require(ctx, sess.RootID, user, need)
	if err != nil {
		return nil, have, err
	}
	return sess, have, nil
}

// LevelOn reports user's level on a session's tree.
func (s *Service) LevelOn(ctx context.Context, sess *models.Session, user string) (auth.Level, error) {
	return s.access.LevelOn(ctx, sess.RootID, user)
}

// Ancestors returns sess's ancestors, root first.
func (s *Service) Ancestors(ctx context.Context, sess *models.Session) ([]models.Session, error) {
	return s.store.Ancestors(ctx, sess)
}

// Descendants returns every session below sess.
func (s *Service) Descendants(ctx context.Context, sess *models.Session) ([]models.Session, error) {
	return s.store.Descendants(ctx, sess)
}

// Agent loads the agent of a session without an access check (the caller already
// passed one on the session).
func (s *Service) Agent(ctx context.Context, sess *models.Session) (*models.Agent, error) {
	return s.store.GetAgent(ctx, sess.AgentID)
}

// Listed is a session in a list, with its pending count: the prompts its snapshot lists
// (its own and its descendants').
type Listed struct {
	Session      models.Session
	PendingCount int
}

// List lists the sessions user can see: the children of parent when given, otherwise
// the top-level sessions.
func (s *Service) List(ctx context.Context, user, parent string) ([]Listed, error) {
	var rows []models.Session
	var err error
	if parent != "" {
		if _, err := s.Authorize(ctx, user, parent, auth.Read); err != nil {
			return nil, err
		}
		rows, err = s.store.ListChildren(ctx, parent)
	} else {
		u := user
		if s.access.SeesAll(user) {
			u = ""
		}
		rows, err = s.store.ListRootsVisibleTo(ctx, u)
	}
	if err != nil {
		return nil, err
	}
	idList := make([]string, len(rows))
	for i := range rows {
		idList[i] = rows[i].ID
	}
	counts, err := s.store.CountPendingInSubtrees(ctx, idList)
	if err != nil {
		return nil, err
	}
	out := make([]Listed, len(rows))
	for i := range rows {
		out[i] = Listed{Session: rows[i], PendingCount: counts[rows[i].ID]}
	}
	return out, nil
}

// Grant is one permission as the API shows it.
type Grant struct {
	User  string `json:"user"`
	Level string `json:"level"`
}

// Permissions lists the grants on sess's tree (read access needed).
func (s *Service) Permissions(ctx context.Context, sess *models.Session) ([]Grant, error) {
	rows, err := s.store.ListPermissions(ctx, sess.RootID)
	if err != nil {
		return nil, err
	}
	out := make([]Grant, len(rows))
	for i, r := range rows {
		out[i] = Grant{User: r.User, Level: auth.Level(r.Level).String()}
	}
	return out, nil
}

// PutPermission grants a level on sess's tree. Nobody can grant owner, and the owner's
// own grant cannot be changed.
func (s *Service) PutPermission(ctx context.Context, sess *models.Session, g Grant) error {
	user := strings.ToLower(strings.TrimSpace(g.User))
	if user == "" || user == auth.LocalUser {
		return errs.Invalid("user", "is required")
	}
	if !storableUser(user) {
		return errs.Invalid("user", "must be UTF-8 text without NUL")
	}
	lvl, err := auth.ParseLevel(g.Level)
	if err != nil {
		return errs.Invalid("level", "%s", err.Error())
	}
	if lvl == auth.Owner {
		return errs.Invalid("level", "owner cannot be granted")
	}
	if cur, _ := s.store.GrantLevel(ctx, sess.RootID, user); user != auth.PublicUser && cur == int(auth.Owner) {
		return errs.Conflict("the owner's grant cannot be changed")
	}
	if err := s.store.PutPermission(ctx, &models.Permission{SessionID: sess.RootID, User: user, Level: int(lvl)}); err != nil {
		return err
	}
	// A lowered grant ends the streams it no longer covers; a raised one adds the tree
	// to the person's inbox.
	s.announceGrant(sess.RootID, user)
	return nil
}

// DeletePermission removes a grant; the owner grant stays.
func (s *Service) DeletePermission(ctx context.Context, sess *models.Session, user string) error {
	user = strings.ToLower(strings.TrimSpace(user))
	if user == "" {
		return errs.Invalid("user", "is required")
	}
	if !storableUser(user) {
		return errs.Invalid("user", "must be UTF-8 text without NUL")
	}
	rows, err := s.store.ListPermissions(ctx, sess.RootID)
	if err != nil {
		return err
	}
	for _, r := range rows {
		if r.User == user && r.Level == int(auth.Owner) {
			return errs.Conflict("the owner's grant cannot be removed")
		}
	}
	ok, err := s.store.DeletePermission(ctx, sess.RootID, user)
	if err != nil {
		return err
	}
	if !ok {
		return errs.NotFound("no grant for %q", user)
	}
	s.announceGrant(sess.RootID, user)
	return nil
}

// FindOrCreateExternal maps an external session id (Claude Code's) to a Gatehouse
// session owned by user, creating it — and an agent for it — on first sight.
func (s *Service) FindOrCreateExternal(ctx context.Context, user, external, agentName, title string) (*models.Session, error) {
	if sess, err := s.store.FindSessionByExternal(ctx, user, external); err == nil {
		return sess, nil
	} else if !errors.Is(err, errs.ErrNotFound) {
		return nil, err
	}
	// One agent per user and harness name, shared by all their external sessions.
	a, err := s.store.FindAgentByName(ctx, user, agentName)
	if errors.Is(err, errs.ErrNotFound) {
		a, err = s.CreateAgent(ctx, user, AgentInput{Name: agentName})
	}
	if err != nil {
		return nil, err
	}
	sess, err := s.CreateSession(ctx, user, SessionInput{AgentID: a.ID, Title: title, ExternalSessionID: external})
	if errors.Is(err, errs.ErrConflict) || isUnique(err) {
		return s.store.FindSessionByExternal(ctx, user, external)
	}
	return sess, err
}

// FindOrCreateChild finds parent's child titled title or creates it (sub-agents).
func (s *Service) FindOrCreateChild(ctx context.Context, user string, parent *models.Session, title string) (*models.Session, error) {
	if sess, err := s.store.FindChildByTitle(ctx, parent.ID, title); err == nil {
		return sess, nil
	}
	sess, err := s.CreateSession(ctx, user, SessionInput{AgentID: parent.AgentID, Title: title, ParentSessionID: parent.ID})
	if errors.Is(err, errs.ErrConflict) {
		return s.store.FindChildByTitle(ctx, parent.ID, title)
	}
	return sess, err
}

// storableUser reports whether a user name can be compared in every database: Postgres
// refuses NUL and invalid UTF-8 in text outright (an error, not "no rows"), and the
// DELETE route takes the name from the query string, past the JSON body checks.
func storableUser(u string) bool { return utf8.ValidString(u) && !strings.ContainsRune(u, 0) }

func isUnique(err error) bool {
	return err != nil && strings.Contains(strings.ToLower(err.Error()), "unique")
}

// MaxTree bounds the sessions one Tree lists.
const MaxTree = 500

// Tree lists the sessions user can see as trees: each top-level session (newest first)
// followed by its sub-agents, depth first, oldest first among siblings; at most
// MaxTree sessions.
func (s *Service) Tree(ctx context.Context, user string) ([]Listed, error) {
	roots, err := s.List(ctx, user, "")
	if err != nil {
		return nil, err
	}
	sort.SliceStable(roots, func(i, j int) bool { return roots[i].Session.CreatedAt.After(roots[j].Session.CreatedAt) })
	var out []Listed
	var walk func(l Listed) error
	walk = func(l Listed) error {
		if len(out) == MaxTree {
			return nil
		}
		out = append(out, l)
		kids, err := s.List(ctx, user, l.Session.ID)
		if err != nil {
			return err
		}
		sort.SliceStable(kids, func(i, j int) bool { return kids[i].Session.CreatedAt.Before(kids[j].Session.CreatedAt) })
		for _, k := range kids {
			if err := walk(k); err != nil {
				return err
			}
		}
		return nil
	}
	for _, r := range roots {
		if err := walk(r); err != nil {
			return nil, err
		}
	}
	return out, nil
}
