package elicit_test

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"github.com/gatehouse-dev/gatehouse/internal/auth"
	"github.com/gatehouse-dev/gatehouse/internal/sessions"
	"github.com/gatehouse-dev/gatehouse/internal/store"
	"github.com/gatehouse-dev/gatehouse/models"
)

// newSession creates an agent's session as the local user, under parent when set.
func newSession(t *testing.T, st *store.Store, parent string) *models.Session {
	t.Helper()
	ctx := context.Background()
	svc := sessions.New(st, &auth.Checker{Mode: auth.ModeNone, Grants: st})
	agent, err := svc.CreateAgent(ctx, auth.LocalUser, sessions.AgentInput{Name: "a"})
	if err != nil {
		t.Fatal(err)
	}
	sess, err := svc.CreateSession(ctx, auth.LocalUser, sessions.SessionInput{AgentID: agent.ID, ParentSessionID: parent})
	if err != nil {
		t.Fatal(err)
	}
	return sess
}

// quietLog discards the core's logs.
func quietLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }
