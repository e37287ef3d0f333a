// Package inbox answers the questions the browser UI asks across sessions: which
// prompts may this person decide right now (the inbox), and what does one session's
// tree look like (sub-agents with pending counts, pending prompts, recent decisions).
//
// It reads through a narrow store interface and checks access with the same rules as
// the API (auth.Checker): a person sees a prompt in the inbox only with edit access to
// its root session.
package inbox

import (
	"context"
	"sort"
	"sync/atomic"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/auth"
	"github.com/gatehouse-dev/gatehouse/internal/markdown"
	"github.com/gatehouse-dev/gatehouse/models"
)

// Limits keep a page bounded however much piles up.
const (
	// MaxPending is the most prompts the inbox lists.
	MaxPending = 500
	// RecentDecisions is how many decided prompts a session page shows.
	RecentDecisions = 25
)

// Store is what the inbox reads.
type Store interface {
	ListRootsVisibleTo(ctx context.Context, user string) ([]models.Session, error)
	PendingMatching(ctx context.Context, q models.PendingQuery) ([]models.Elicitation, error)
	GetElicitation(ctx context.Context, id string) (*models.Elicitation, error)
	PendingInSubtree(ctx context.Context, path string) ([]models.Elicitation, error)
	RecentDecidedInSubtree(ctx context.Context, path string, limit int) ([]models.Elicitation, error)
	Descendants(ctx context.Context, sess *models.Session) ([]models.Session, error)
	Ancestors(ctx context.Context, sess *models.Session) ([]models.Session, error)
	CountPendingBySession(ctx context.Context, ids []string) (map[string]int, error)
	GetSession(ctx context.Context, id string) (*models.Session, error)
	GetAgent(ctx context.Context, id string) (*models.Agent, error)
}

// Service is the inbox and session-overview domain.
type Service struct {
	store  Store
	access *auth.Checker
	// loads counts inbox builds (each is several queries), so a test or an operator can
	// see that events nobody's inbox shows cost nothing.
	loads atomic.Uint64
	// md renders plans when a bulk answer describes a prompt (prompt.Describe).
	md  *markdown.Renderer
	now func() time.Time
}

// New builds the service.
func New(st Store, access *auth.Checker) *Service {
	return &Service{store: st, access: access, md: markdown.New(), now: time.Now}
}

// Item is one prompt with what a list needs to show about it.
type Item struct {
	Row    models.Elicitation
	Params map[string]any
	// Session owns the prompt; Path runs from the root to it.
	Session models.Session
	Path    []models.Session
	Agent   string
}

// Group is the pending prompts under one root session, newest first.
type Group struct {
	Root  models.Session
	Agent string
	Items []Item
}

// Inbox is every pending prompt user may decide, grouped by root session; groups are
// ordered by their newest prompt.
type Inbox struct {
	Groups []Group
	Count  int
}

// Loads reports how many inboxes have been built (for metrics).
func (s *Service) Loads() uint64 { return s.loads.Load() }

// Roots returns the ids of the trees whose prompts user's inbox lists: the top-level
// sessions user holds edit access on.
func (s *Service) Roots(ctx context.Context, user string) ([]string, error) {
	listUser := user
	if !s.access.Mode.PerPerson() { // an admin's inbox is still their own trees'
		listUser = ""
	}
	roots, err := s.store.ListRootsVisibleTo(ctx, listUser)
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, r := range roots {
		lvl, err := s.access.LevelOn(ctx, r.ID, user)
		if err != nil {
			return nil, err
		}
		if lvl >= auth.Edit {
			ids = append(ids, r.ID)
		}
	}
	return ids, nil
}

// Pending builds user's inbox, narrowed by f (the zero Filter lists everything).
func (s *Service) Pending(ctx context.Context, user string, f Filter) (*Inbox, error) {
	s.loads.Add(1)
	ids, err := s.Roots(ctx, user)
	if err != nil {
		return nil, err
	}
	out := &Inbox{}
	if len(ids) == 0 {
		return out, nil
	}
	q, ok, err := s.query(ctx, ids, f)
	if err != nil || !ok {
		return out, err
	}
	rows, err := s.store.PendingMatching(ctx, q)
	if err != nil {
		return nil, err
	}
	out.Count = len(rows)
	r := s.newResolver()
	groupAt := map[string]int{}
	for _, row := range rows {
		item, err := r.item(ctx, row)
		if err != nil {
			return nil, err
		}
		root := item.Session
		if len(item.Path) > 0 {
			root = item.Path[0]
		}
		gi, ok := groupAt[root.ID]
		if !ok {
			gi = len(out.Groups)
			groupAt[root.ID] = gi
			out.Groups = append(out.Groups, Group{Root: root, Agent: r.agent(ctx, root.AgentID)})
		}
		out.Groups[gi].Items = append(out.Groups[gi].Items, item)
	}
	return out, nil
}

// Header describes a session for a page header: the path from the root to it and the
// name of its agent.
func (s *Service) Header(ctx context.Context, sess *models.Session) ([]models.Session, string, error) {
	anc, err := s.store.Ancestors(ctx, sess)
	if err != nil {
		return nil, "", err
	}
	r := s.newResolver()
	return append(anc, *sess), r.agent(ctx, sess.AgentID), nil
}

// Node is one session in a tree, with its depth below the tree's top and the number
// of prompts pending on it.
type Node struct {
	Session models.Session
	Depth   int
	Pending int
}

// Overview is one session as its page shows it.
type Overview struct {
	Session models.Session
	Path    []models.Session
	Agent   string
	// Tree is the session and its sub-agents, depth first.
	Tree []Node
	// Pending lists the subtree's pending prompts, newest first.
	Pending []Item
	// Recent lists the subtree's latest decisions, newest first.
	Recent []Item
}

// Overview loads a session's page. The caller has already checked read access.
func (s *Service) Overview(ctx context.Context, sess *models.Session) (*Overview, error) {
	path, agent, err := s.Header(ctx, sess)
	if err != nil {
		return nil, err
	}
	desc, err := s.store.Descendants(ctx, sess)
	if err != nil {
		return nil, err
	}
	all := append([]models.Session{*sess}, desc...)
	ids := make([]string, len(all))
	for i := range all {
		ids[i] = all[i].ID
	}
	counts, err := s.store.CountPendingBySession(ctx, ids)
	if err != nil {
		return nil, err
	}
	ov := &Overview{Session: *sess, Path: path, Agent: agent, Tree: tree(all, counts)}
	r := s.newResolver()
	for i := range path {
		r.sessions[path[i].ID] = path[i]
	}
	for i := range all {
		r.sessions[all[i].ID] = all[i]
	}
	pending, err := s.store.PendingInSubtree(ctx, sess.Path)
	if err != nil {
		return nil, err
	}
	for i := len(pending) - 1; i >= 0; i-- { // the store gives oldest first
		item, err := r.item(ctx, pending[i])
		if err != nil {
			return nil, err
		}
		ov.Pending = append(ov.Pending, item)
	}
	recent, err := s.store.RecentDecidedInSubtree(ctx, sess.Path, RecentDecisions)
	if err != nil {
		return nil, err
	}
	for _, row := range recent {
		item, err := r.item(ctx, row)
		if err != nil {
			return nil, err
		}
		ov.Recent = append(ov.Recent, item)
	}
	return ov, nil
}

// tree orders a session and its descendants depth first, children by creation.
func tree(all []models.Session, counts map[string]int) []Node {
	if len(all) == 0 {
		return nil
	}
	top := all[0]
	children := map[string][]models.Session{}
	for _, s := range all[1:] {
		if s.ParentID != nil {
			children[*s.ParentID] = append(children[*s.ParentID], s)
		}
	}
	for k := range children {
		list := children[k]
		sort.SliceStable(list, func(i, j int) bool { return list[i].CreatedAt.Before(list[j].CreatedAt) })
	}
	var out []Node
	var walk func(s models.Session, depth int)
	walk = func(s models.Session, depth int) {
		out = append(out, Node{Session: s, Depth: depth, Pending: counts[s.ID]})
		for _, c := range children[s.ID] {
			walk(c, depth+1)
		}
	}
	walk(top, 0)
	return out
}

// resolver caches sessions and agent names while a list is built.
type resolver struct {
	s        *Service
	sessions map[string]models.Session
	agents   map[string]string
}

func (s *Service) newResolver() *resolver {
	return &resolver{s: s, sessions: map[string]models.Session{}, agents: map[string]string{}}
}

func (r *resolver) session(ctx context.Context, id string) (models.Session, error) {
	if s, ok := r.sessions[id]; ok {
		return s, nil
	}
	sess, err := r.s.store.GetSession(ctx, id)
	if err != nil {
		return models.Session{}, err
	}
	r.sessions[id] = *sess
	return *sess, nil
}

func (r *resolver) agent(ctx context.Context, id string) string {
	if name, ok := r.agents[id]; ok {
		return name
	}
	name := ""
	if a, err := r.s.store.GetAgent(ctx, id); err == nil {
		name = a.Name
	}
	r.agents[id] = name
	return name
}

func (r *resolver) item(ctx context.Context, row models.Elicitation) (Item, error) {
	sess, err := r.session(ctx, row.SessionID)
	if err != nil {
		return Item{}, err
	}
	it := Item{Row: row, Session: sess, Agent: r.agent(ctx, sess.AgentID)}
	it.Params = row.DecodeParams().All
	for _, id := range sess.AncestorIDs() {
		anc, err := r.session(ctx, id)
		if err != nil {
			return Item{}, err
		}
		it.Path = append(it.Path, anc)
	}
	it.Path = append(it.Path, sess)
	return it, nil
}
