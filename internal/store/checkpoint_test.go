package store_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
	"github.com/gatehouse-dev/gatehouse/models"
)

// TestSQLiteCheckpointsBesideTheWriter: commits do not checkpoint (that would put an
// fsync inside a person's verdict), yet what they write reaches the database file
// without anyone asking — the store's own checkpointer copies it there.
func TestSQLiteCheckpointsBesideTheWriter(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "g.db")
	st := testserver.OpenStore(t, "sqlite://"+path)
	size := func() int64 {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}
	// Let a checkpoint take the migrations first, so the growth below is these rows'.
	deadline := time.Now().Add(10 * time.Second)
	for size() == 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond) // polling a file's size, not synchronising
	}
	before := size()
	now := time.Now().UTC()
	if err := st.CreateAgent(ctx, &models.Agent{ID: "a", Name: "a", CreatedBy: "u", CreatedAt: now, UpdatedAt: now}); err != nil {
		t.Fatal(err)
	}
	sess := &models.Session{ID: "s", AgentID: "a", Kind: models.KindDefault, RootID: "s", Path: "/s/", CreatedBy: "u", CreatedAt: now, UpdatedAt: now}
	if err := st.CreateSession(ctx, sess, nil); err != nil {
		t.Fatal(err)
	}
	// About 1.5 MB of rows: far more than fits in the file as it was.
	for i := range 300 {
		params := fmt.Sprintf(`{"message":"%05d %s"}`, i, fmt.Sprintf("%05000d", i))
		if err := st.InsertElicitation(ctx, &models.Elicitation{ID: fmt.Sprintf("e%d", i), SessionID: "s",
			Origin: models.OriginClaudePermission, Params: []byte(params), Status: models.StatusPending,
			CreatedAt: now, ExpiresAt: now.Add(time.Hour)}); err != nil {
			t.Fatal(err)
		}
	}
	deadline = time.Now().Add(10 * time.Second)
	for size() < before+1<<20 {
		if time.Now().After(deadline) {
			t.Fatalf("database file still %d bytes (was %d): the write-ahead log was never checkpointed", size(), before)
		}
		time.Sleep(20 * time.Millisecond) // polling a file's size, not synchronising
	}
}
