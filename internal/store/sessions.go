package store

import (
	"context"
	"strings"

	"github.com/gatehouse-dev/gatehouse/models"
)

// CreateAgent inserts an agent.
func (s *Store) CreateAgent(ctx context.Context, a *models.Agent) error {
	return s.w(ctx).Create(a).Error
}

// GetAgent loads one agent.
func (s *Store) GetAgent(ctx context.Context, id string) (*models.Agent, error) {
	var a models.Agent
	if err := s.ctx(ctx).Where("id = ?", id).Take(&a).Error; err != nil {
		return nil, notFound(err)
	}
	return &a, nil
}

// FindAgentByName finds the oldest agent user registered under name.
func (s *Store) FindAgentByName(ctx context.Context, user, name string) (*models.Agent, error) {
	var a models.Agent
	err := s.ctx(ctx).Where("created_by = ? AND name = ?", user, name).Order("created_at, id").Take(&a).Error
	if err != nil {
		return nil, notFound(err)
	}
	return &a, nil
}

// ListAgents lists agents created by user, or all when user is empty.
func (s *Store) ListAgents(ctx context.Context, user string) ([]models.Agent, error) {
	var out []models.Agent
	q := s.ctx(ctx).Order("created_at, id")
	if user != "" {
		q = q.Where("created_by = ?", user)
	}
	return out, q.Find(&out).Error
}

// CreateSession inserts a session, and the owner grant when it is top level, in one
// transaction. A duplicate child title is ErrConflict.
func (s *Store) CreateSession(ctx context.Context, sess *models.Session, owner *models.Permission) error {
	err := s.inTx(ctx, s.wdb, func(tx *gormDB) error {
		if err := tx.Create(sess).Error; err != nil {
			return err
		}
		if owner != nil {
			return tx.Create(owner).Error
		}
		return nil
	})
	if isUniqueViolation(err) {
		return ErrConflict
	}
	return err
}

// GetSession loads one session. Rows are served from a cache when possible: a session
// never changes after it is created, so a cached row is never stale, on any replica.
func (s *Store) GetSession(ctx context.Context, id string) (*models.Session, error) {
	if sess, ok := s.sessions.get(id); ok {
		return sess, nil
	}
	var sess models.Session
	if err := s.ctx(ctx).Where("id = ?", id).Take(&sess).Error; err != nil {
		return nil, notFound(err)
	}
	s.sessions.put(&sess)
	return &sess, nil
}

// FindSessionByExternal finds the session a user created for an external (e.g. Claude
// Code) session id.
func (s *Store) FindSessionByExternal(ctx context.Context, user, external string) (*models.Session, error) {
	var sess models.Session
	err := s.ctx(ctx).Where("created_by = ? AND external_session_id = ?", user, external).Take(&sess).Error
	if err != nil {
		return nil, notFound(err)
	}
	return &sess, nil
}

// FindChildByTitle finds a child of parent with the given title.
func (s *Store) FindChildByTitle(ctx context.Context, parent, title string) (*models.Session, error) {
	var sess models.Session
	err := s.ctx(ctx).Where("parent_id = ? AND title = ?", parent, title).Take(&sess).Error
	if err != nil {
		return nil, notFound(err)
	}
	return &sess, nil
}

// Ancestors returns the ancestors of sess, root first, in one query.
func (s *Store) Ancestors(ctx context.Context, sess *models.Session) ([]models.Session, error) {
	ids := sess.AncestorIDs()
	if len(ids) == 0 {
		return nil, nil
	}
	var rows []models.Session
	if err := s.ctx(ctx).Where("id IN ?", ids).Order("depth").Find(&rows).Error; err != nil {
		return nil, err
	}
	return rows, nil
}

// Descendants returns every session below sess (not sess itself), in one prefix query.
func (s *Store) Descendants(ctx context.Context, sess *models.Session) ([]models.Session, error) {
	var rows []models.Session
	err := s.ctx(ctx).Where("path LIKE ? ESCAPE '\\' AND id <> ?", likePrefix(sess.Path), sess.ID).
		Order("depth, created_at").Find(&rows).Error
	return rows, err
}

// ListChildren lists the direct children of parent.
func (s *Store) ListChildren(ctx context.Context, parent string) ([]models.Session, error) {
	var rows []models.Session
	return rows, s.ctx(ctx).Where("parent_id = ?", parent).Order("created_at, id").Find(&rows).Error
}

// ListRootsVisibleTo lists the top-level sessions user holds a grant on (directly or via
// the public grant). An empty user means everyone (auth none).
func (s *Store) ListRootsVisibleTo(ctx context.Context, user string) ([]models.Session, error) {
	var rows []models.Session
	q := s.ctx(ctx).Where("parent_id IS NULL").Order("created_at DESC, id")
	if user != "" {
		q = q.Where("id IN (?)", s.ctx(ctx).Model(&models.Permission{}).Select("session_id").
			Where("user_id IN ?", []string{user, PublicUser}))
	}
	return rows, q.Find(&rows).Error
}

// PublicUser is the grant holder that stands for everyone signed in.
const PublicUser = "__public__"

func likePrefix(p string) string {
	r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	return r.Replace(p) + "%"
}
