package park_test

import (
	"context"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/elicit"
	"github.com/gatehouse-dev/gatehouse/internal/park"
)

// TestParkThenWaitsInLineWithoutGoroutines: with every slot taken, turns queued by
// ParkThen hold no goroutine each, get their slot in the order they came once it is
// free, never more at once than there are slots, and one whose caller left meanwhile
// is told ErrClientGone without being prepared.
func TestParkThenWaitsInLineWithoutGoroutines(t *testing.T) {
	const queued = 2000
	s := park.New(nil, nil, 1)
	release, taken := make(chan struct{}), make(chan struct{})
	first := make(chan error, 1)
	s.ParkThen(context.Background(), func() (*park.Job, error) {
		close(taken)
		<-release
		return &park.Job{Immediate: "first"}, nil
	}, func(_ park.Parked, err error) { first <- err })
	<-taken

	before := runtime.NumGoroutine()
	var mu sync.Mutex
	var order []int
	var inSlot, most int
	var wg sync.WaitGroup
	for i := range queued {
		wg.Add(1)
		s.ParkThen(context.Background(), func() (*park.Job, error) {
			mu.Lock()
			inSlot++
			most = max(most, inSlot)
			order = append(order, i)
			inSlot--
			mu.Unlock()
			return &park.Job{Immediate: i}, nil
		}, func(p park.Parked, err error) {
			defer wg.Done()
			if body, ok := p.Immediate(); err != nil || !ok || body != i {
				t.Errorf("turn %d answered %v %v %v", i, body, ok, err)
			}
		})
	}
	gone, cancel := context.WithCancel(context.Background())
	cancel()
	left := make(chan error, 1)
	s.ParkThen(gone, func() (*park.Job, error) {
		t.Error("prepared a turn whose caller had left")
		return nil, nil
	}, func(_ park.Parked, err error) { left <- err })

	if n := runtime.NumGoroutine() - before; n > queued/10 {
		t.Fatalf("%d turns in line started %d goroutines", queued, n)
	}
	if got := s.Queued(); got != queued+1 {
		t.Fatalf("Queued() = %d, want %d", got, queued+1)
	}
	close(release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	select {
	case err := <-left:
		if err != elicit.ErrClientGone {
			t.Fatalf("the turn whose caller left got %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the turn whose caller left was never answered")
	}
	for i, got := range order {
		if got != i {
			t.Fatalf("turn %d prepared %dth: not in the order they came", got, i)
		}
	}
	if most != 1 {
		t.Fatalf("%d turns prepared at once with one slot", most)
	}
	if s.Queued() != 0 {
		t.Fatalf("Queued() = %d after the line drained", s.Queued())
	}
}
