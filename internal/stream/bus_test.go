package stream

import (
	"encoding/json"
	"testing"
	"time"
)

func ev(typ string) Event { return Event{Type: typ, Data: json.RawMessage(`{}`)} }

// A subscriber that stops reading is dropped once its buffer is full; the publisher
// never blocks and other subscribers keep receiving.
func TestSlowSubscriberIsDroppedWithoutBlocking(t *testing.T) {
	b := NewLocal()
	slow := b.Subscribe("s1", 2)
	fast := b.Subscribe("s1", 100)
	defer fast.Cancel()

	done := make(chan struct{})
	go func() {
		for i := 0; i < 50; i++ {
			b.Publish([]string{"s1"}, []Event{ev("e")})
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("publisher blocked on a slow subscriber")
	}
	got := 0
	for range slow.C {
		got++
	}
	if got != 2 {
		t.Fatalf("slow subscriber got %d events before being dropped, want its buffer (2)", got)
	}
	for i := 0; i < 50; i++ {
		select {
		case <-fast.C:
		case <-time.After(time.Second):
			t.Fatalf("fast subscriber missed event %d", i)
		}
	}
	if n := b.Count(); n != 1 {
		t.Fatalf("Count = %d, want 1 after the slow subscriber was dropped", n)
	}
}

// Events go only to the sessions they are published on; a SubscribeMany subscriber
// sees those of each of its sessions.
func TestPublishRoutesPerSession(t *testing.T) {
	b := NewLocal()
	a := b.Subscribe("a", 10)
	c := b.Subscribe("c", 10)
	all := b.SubscribeMany([]string{"a", "b"}, 10)
	b.Publish([]string{"a", "b"}, []Event{ev("for-a"), ev("for-b")})

	if d := <-a.C; d.Event.Type != "for-a" || d.Session != "a" {
		t.Fatalf("a got %+v", d)
	}
	select {
	case d := <-c.C:
		t.Fatalf("c got an event for another session: %+v", d)
	default:
	}
	if d := <-all.C; d.Session != "a" {
		t.Fatalf("all got %+v first", d)
	}
	if d := <-all.C; d.Session != "b" {
		t.Fatalf("all got %+v second", d)
	}
	a.Cancel()
	a.Cancel() // idempotent
	if _, ok := <-a.C; ok {
		t.Fatal("cancelled subscription channel still open")
	}
}

func TestDecidedCallsCallback(t *testing.T) {
	b := NewLocal()
	got := make(chan string, 1)
	b.OnDecided(func(id string) { got <- id })
	b.Decided("elicit_x")
	if id := <-got; id != "elicit_x" {
		t.Fatalf("callback got %q", id)
	}
}
