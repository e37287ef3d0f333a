package park_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/auth"
	"github.com/gatehouse-dev/gatehouse/internal/elicit"
	"github.com/gatehouse-dev/gatehouse/internal/park"
)

// TestSlots: with every slot taken TryPark declines at once and Park waits (or gives
// up with ErrClientGone when its caller leaves); a freed slot lets the next prepare.
func TestSlots(t *testing.T) {
	s := park.New(nil, nil, 1)
	release, taken := make(chan struct{}), make(chan struct{})
	done := make(chan park.Parked, 1)
	go func() {
		p, _ := s.Park(context.Background(), func() (*park.Job, error) {
			close(taken)
			<-release
			return &park.Job{Immediate: "first"}, nil
		})
		done <- p
	}()
	<-taken
	if _, ok, _ := s.TryPark(context.Background(), func() (*park.Job, error) {
		t.Error("prepared with no slot free")
		return nil, nil
	}); ok {
		t.Fatal("TryPark took a slot that was not free")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.Park(ctx, func() (*park.Job, error) { return nil, nil }); err != elicit.ErrClientGone {
		t.Fatalf("Park with its caller gone: %v", err)
	}
	close(release)
	select {
	case p := <-done:
		if body, ok := p.Immediate(); !ok || body != "first" {
			t.Fatalf("first answer = %v %v", body, ok)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("first park never answered")
	}
	p, ok, err := s.TryPark(context.Background(), func() (*park.Job, error) {
		return &park.Job{Level: auth.Read, NoVerdict: "none"}, nil
	})
	if !ok || err != nil {
		t.Fatalf("TryPark with the slot free: %v %v", ok, err)
	}
	// A caller who may not park is answered "no verdict" at once.
	if _, imm := p.Immediate(); imm || p.Waiting() || p.NoVerdict() != "none" {
		t.Fatalf("read-only caller: immediate %v waiting %v no verdict %v", imm, p.Waiting(), p.NoVerdict())
	}
}

// TestPanicWhilePreparing: a panic in prepare is an error (the request's 500), and
// the slot comes free.
func TestPanicWhilePreparing(t *testing.T) {
	s := park.New(nil, nil, 1)
	_, err := s.Park(context.Background(), func() (*park.Job, error) { panic("a bug") })
	if err == nil || !strings.Contains(err.Error(), "a bug") {
		t.Fatalf("err = %v", err)
	}
	if _, ok, _ := s.TryPark(context.Background(), func() (*park.Job, error) { return &park.Job{Immediate: 1}, nil }); !ok {
		t.Fatal("the slot stayed taken after a panic")
	}
}
