package notify_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/notify"
	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
	"github.com/gatehouse-dev/gatehouse/models"
)

// countingStore is the real store, counting the reads planning makes per person and
// per tree.
type countingStore struct {
	notify.Store
	settings, editors atomic.Int64
}

func (c *countingStore) GetSettingsDoc(ctx context.Context, user string) ([]byte, error) {
	c.settings.Add(1)
	return c.Store.GetSettingsDoc(ctx, user)
}

func (c *countingStore) EditorsOf(ctx context.Context, root string) ([]string, error) {
	c.editors.Add(1)
	return c.Store.EditorsOf(ctx, root)
}

// quietChannel is a configured channel that is never sent on: these tests only plan.
type quietChannel string

func (q quietChannel) Name() string { return string(q) }
func (quietChannel) Send(context.Context, *notify.Message) (string, error) {
	return "", fmt.Errorf("not sent in this test")
}

// A burst of prompts in one tree — an agent asking again and again — is planned from
// one reading of who may decide there and of each person's settings, not one reading a
// prompt: every prompt still gets its delivery, each person's settings as stored.
func TestPlanningABurstReadsEachPersonOnce(t *testing.T) {
	ctx := context.Background()
	st := testserver.OpenStore(t, "sqlite://"+filepath.Join(t.TempDir(), "g.db"))
	now := time.Now().UTC()
	if err := st.CreateAgent(ctx, &models.Agent{ID: "a", Name: "a", CreatedBy: "alice", CreatedAt: now, UpdatedAt: now}); err != nil {
		t.Fatal(err)
	}
	sess := &models.Session{ID: "s", AgentID: "a", Kind: models.KindDefault, RootID: "s", Path: "/s/", CreatedBy: "alice", CreatedAt: now, UpdatedAt: now}
	if err := st.CreateSession(ctx, sess, &models.Permission{SessionID: "s", User: "alice", Level: 3, CreatedAt: now}); err != nil {
		t.Fatal(err)
	}
	if err := st.PutSettingsDoc(ctx, "alice", []byte(`{"webhook":{"url":"http://127.0.0.1:9/hook"}}`), now); err != nil {
		t.Fatal(err)
	}
	const prompts = 40
	ids := make([]string, prompts)
	for i := range prompts {
		ids[i] = fmt.Sprintf("e%02d", i)
		if err := st.InsertElicitation(ctx, &models.Elicitation{ID: ids[i], SessionID: "s", Origin: models.OriginClaudePermission,
			Params: []byte(`{"message":"m"}`), Status: models.StatusPending, CreatedAt: now, ExpiresAt: now.Add(time.Hour)}); err != nil {
			t.Fatal(err)
		}
	}
	counting := &countingStore{Store: st}
	svc := notify.New(counting, nil, notify.Options{}, quietChannel(notify.ChannelWebhook))

	planned, err := svc.PlanAll(ctx)
	if err != nil || planned != prompts {
		t.Fatalf("planned %d, %v; want %d", planned, err, prompts)
	}
	if n := counting.settings.Load(); n != 1 {
		t.Errorf("alice's settings were read %d times for %d prompts of one tree, want once", n, prompts)
	}
	if n := counting.editors.Load(); n != 1 {
		t.Errorf("the tree's editors were read %d times for %d prompts, want once", n, prompts)
	}
	got, err := st.NotificationsOfMany(ctx, ids)
	if err != nil {
		t.Fatal(err)
	}
	per := map[string]int{}
	for _, n := range got {
		if n.User != "alice" || n.Channel != notify.ChannelWebhook || n.Kind != notify.KindCreated {
			t.Fatalf("unexpected delivery planned: %+v", n)
		}
		per[n.ElicitationID]++
	}
	for _, id := range ids {
		if per[id] != 1 {
			t.Fatalf("prompt %s got %d deliveries, want 1 (all: %v)", id, per[id], per)
		}
	}
}
