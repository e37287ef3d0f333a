package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/store"
	"github.com/gatehouse-dev/gatehouse/models"
)

// newSession stores an agent and a top-level session of it, sess_1, for tests of the
// rows that hang off a session.
func newSession(t testing.TB, st *store.Store) *models.Session {
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
