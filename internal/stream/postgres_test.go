package stream_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/store"
	"github.com/gatehouse-dev/gatehouse/internal/stream"
	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
	"github.com/gatehouse-dev/gatehouse/models"
)

// shortOfConnections is a Postgres store whose first reads of logged events fail, as
// they do when the process is out of file descriptors and the pool cannot open a
// connection: the LISTEN connection is fine meanwhile.
type shortOfConnections struct {
	*store.Store
	failures atomic.Int32
}

func (s *shortOfConnections) EventsByID(ctx context.Context, ids []int64) ([]models.SessionEvent, error) {
	if s.failures.Add(-1) >= 0 {
		return nil, errors.New("dial tcp 127.0.0.1:5432: socket: too many open files")
	}
	return s.Store.EventsByID(ctx, ids)
}

// runningBus starts a Postgres bus on st, listening until the test ends.
func runningBus(t *testing.T, st stream.PostgresLog) *stream.Postgres {
	bus := stream.NewPostgres(st, slog.New(slog.NewTextHandler(io.Discard, nil)))
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); bus.Run(ctx) }()
	t.Cleanup(func() { stop(); <-done })
	<-bus.Ready()
	return bus
}

// TestStreamsOutlastAMomentWithoutConnections: when reading a notification's events
// fails for a moment, the listener tries again instead of reconnecting, so the
// replica's streams stay open and get the event — they are not all dropped to
// reconnect to a process that has no descriptor to give them.
func TestStreamsOutlastAMomentWithoutConnections(t *testing.T) {
	st := &shortOfConnections{Store: testserver.OpenStore(t, testserver.PostgresDB(t).NewURL(t))}
	st.failures.Store(2)
	sess := testserver.NewSession(t, st.Store)

	bus := runningBus(t, st)

	sub := bus.Subscribe(sess.ID, 8)
	defer sub.Cancel()
	bus.Publish([]string{sess.ID}, []stream.Event{{Type: "note", Data: json.RawMessage(`{"n":1}`)}})
	select {
	case d, ok := <-sub.C:
		if !ok {
			t.Fatal("the stream was dropped when a read of the event log failed for a moment")
		}
		if d.Event.Type != "note" || d.Event.Seq == 0 {
			t.Fatalf("delivered %+v, want the logged note", d.Event)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the event was never delivered")
	}
	if n := st.failures.Load(); n >= 0 {
		t.Fatalf("%d failing reads left: the event was not read through the failures", n+1)
	}
}

// countingReads is a Postgres store that counts the reads of logged events.
type countingReads struct {
	*store.Store
	reads atomic.Int32
}

func (s *countingReads) EventsByID(ctx context.Context, ids []int64) ([]models.SessionEvent, error) {
	s.reads.Add(1)
	return s.Store.EventsByID(ctx, ids)
}

// TestAReplicaWithoutSubscribersReadsNoEvents: a notification of events no subscriber
// of this replica can want is not read back from the log — the read costs this process
// and the database a query for every batch any replica commits — while one that comes
// once a subscriber is registered is read and delivered.
func TestAReplicaWithoutSubscribersReadsNoEvents(t *testing.T) {
	st := &countingReads{Store: testserver.OpenStore(t, testserver.PostgresDB(t).NewURL(t))}
	ctx := context.Background()
	sess := testserver.NewSession(t, st.Store)

	bus := runningBus(t, st)
	handled := make(chan struct{})
	bus.OnGrantChanged(func(root, _ string) {
		if root == "marker" {
			close(handled)
		}
	})

	bus.Publish([]string{sess.ID}, []stream.Event{{Type: "unwatched", Data: json.RawMessage(`{"n":1}`)}})
	// A listener handles notifications one at a time, in commit order: once a later
	// one is handled, so is the events' notification.
	if err := st.Notify(ctx, stream.GrantsChannel, `{"root":"marker"}`); err != nil {
		t.Fatal(err)
	}
	select {
	case <-handled:
	case <-time.After(30 * time.Second):
		t.Fatal("the listener never handled the later notification")
	}
	sub := bus.Subscribe(sess.ID, 8)
	defer sub.Cancel()
	bus.Publish([]string{sess.ID}, []stream.Event{{Type: "watched", Data: json.RawMessage(`{"n":2}`)}})
	select {
	case d, ok := <-sub.C:
		if !ok {
			t.Fatal("the stream was dropped")
		}
		if d.Event.Type != "watched" {
			t.Fatalf("delivered %q first, want the event published once the stream was open", d.Event.Type)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the event published once the stream was open was never delivered")
	}
	if n := st.reads.Load(); n != 1 {
		t.Fatalf("the log was read %d times, want once: the notification of events published before anyone here subscribed was read back", n)
	}
}
