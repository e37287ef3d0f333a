package groupcommit

import (
	"runtime"
	"sync"
	"testing"
)

// TestGroupsCallersThatArriveTogether: callers that arrive while a group runs share the
// next one, each is run exactly once, no group exceeds Max, and every caller returns
// only once its own item has run.
func TestGroupsCallersThatArriveTogether(t *testing.T) {
	const n = 50
	started := make(chan struct{})
	release := make(chan struct{})
	var mu sync.Mutex
	var groups [][]int
	ran := map[int]bool{}
	g := &Group[int]{Max: 20, Run: func(items []int) {
		mu.Lock()
		first := len(groups) == 0
		groups = append(groups, items)
		for _, it := range items {
			if ran[it] {
				t.Errorf("item %d ran twice", it)
			}
			ran[it] = true
		}
		mu.Unlock()
		if first {
			close(started)
			<-release // the others queue up meanwhile
		}
	}}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); g.Do(0) }()
	<-started
	for i := 1; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			g.Do(i)
			mu.Lock()
			defer mu.Unlock()
			if !ran[i] {
				t.Errorf("Do(%d) returned before its item ran", i)
			}
		}()
	}
	for {
		g.mu.Lock()
		queued := len(g.queue)
		g.mu.Unlock()
		if queued == n-1 {
			break
		}
		runtime.Gosched() // polling the queue's length, not synchronising
	}
	close(release)
	wg.Wait()
	if len(ran) != n {
		t.Fatalf("%d of %d items ran", len(ran), n)
	}
	// 1 (the first, alone) + 49 queued in groups of at most 20: 20, 20, 9.
	if len(groups) != 4 {
		t.Fatalf("%d groups %v, want 4", len(groups), groups)
	}
	for _, gr := range groups {
		if len(gr) > g.Max {
			t.Fatalf("a group of %d, over Max %d", len(gr), g.Max)
		}
	}
}

// TestAPanickingRunDoesNotStrandTheOthers: the callers queued behind a group whose Run
// panicked still get their turn.
func TestAPanickingRunDoesNotStrandTheOthers(t *testing.T) {
	g := &Group[int]{Max: 1, Run: func(items []int) {
		if items[0] == 0 {
			panic("boom")
		}
	}}
	func() {
		defer func() { recover() }()
		g.Do(0)
	}()
	done := make(chan struct{})
	go func() { g.Do(1); close(done) }()
	<-done
}
