package testserver

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/store"
	"github.com/gatehouse-dev/gatehouse/models"
)

// OpenStore opens and migrates a store at url (a fresh SQLite file when url is ""),
// closed when the test ends — for tests of the domain below the HTTP layer.
func OpenStore(t testing.TB, url string) *store.Store {
	t.Helper()
	if url == "" {
		url = "sqlite://" + filepath.Join(t.TempDir(), "g.db")
	}
	st, err := store.Open(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.Migrate(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	return st
}

// NewSession stores an agent and a top-level session of it, sess_1, straight in st:
// for tests of what hangs off a session below the HTTP layer.
func NewSession(t testing.TB, st *store.Store) *models.Session {
	t.Helper()
	ctx := context.Background()
	now := time.Now().UTC()
	agent := &models.Agent{ID: "agent_1", Name: "a", Config: []byte("{}"), CreatedBy: "u", CreatedAt: now, UpdatedAt: now}
	if err := st.CreateAgent(ctx, agent); err != nil {
		t.Fatal(err)
	}
	sess := &models.Session{ID: "sess_1", AgentID: agent.ID, Kind: models.KindDefault, RootID: "sess_1",
		Path: "/sess_1/", CreatedBy: "u", CreatedAt: now, UpdatedAt: now}
	if err := st.CreateSession(ctx, sess, nil); err != nil {
		t.Fatal(err)
	}
	return sess
}
