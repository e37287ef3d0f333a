package park

import (
	"runtime"
	"testing"
	"time"
)

// waitFor waits until cond holds, failing the test after a few seconds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		runtime.Gosched()
	}
}

func TestAnIdleWorkerTakesTheNextWork(t *testing.T) {
	w := newWorkers()
	for range 50 {
		done := make(chan struct{})
		w.run(func() { close(done) })
		<-done
		waitFor(t, "a worker waits for work", func() bool { return w.waiting.Load() >= 1 })
	}
	// A worker counts itself waiting just before it waits, so now and then work sent
	// in that instant finds none and starts another; without reuse it would be 50.
	if n := w.started.Load(); n > 10 {
		t.Fatalf("50 works one after another started %d workers, want a few at most", n)
	}
}

func TestBusyWorkersDoNotHoldUpNewWork(t *testing.T) {
	w := newWorkers()
	release := make(chan struct{})
	running := make(chan struct{}, 3)
	for range 3 {
		w.run(func() { running <- struct{}{}; <-release })
	}
	for range 3 {
		<-running // all three run at once: none waited for another
	}
	close(release)
	if n := w.started.Load(); n != 3 {
		t.Fatalf("%d workers started for three works at once, want 3", n)
	}
}

func TestAnIdleWorkerEnds(t *testing.T) {
	w := newWorkers()
	w.idleFor = time.Millisecond
	done := make(chan struct{})
	w.run(func() { close(done) })
	<-done
	// Waiting for the count of waiting workers to be 1 and then 0 could miss the
	// millisecond it is 1 on a busy machine; the count of ended workers only grows.
	waitFor(t, "the idle worker ends", func() bool { return w.ended.Load() == 1 })
	if n := w.waiting.Load(); n != 0 {
		t.Fatalf("%d workers waiting after the only one ended, want 0", n)
	}
	// Work after that starts a new worker: the one that ended takes nothing.
	done2 := make(chan struct{})
	w.run(func() { close(done2) })
	<-done2
	if n := w.started.Load(); n != 2 {
		t.Fatalf("%d workers started, want 2", n)
	}
}
