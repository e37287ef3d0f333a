package logsink

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"
)

// gate is an output that blocks every write until it is opened, recording what it got.
type gate struct {
	open    chan struct{}
	entered chan struct{} // closed at the first write
	once    sync.Once
	mu      sync.Mutex
	got     bytes.Buffer
}

func newGate() *gate { return &gate{open: make(chan struct{}), entered: make(chan struct{})} }

func (g *gate) Write(p []byte) (int, error) {
	g.once.Do(func() { close(g.entered) })
	<-g.open
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.got.Write(p)
}

// TestLinesDoNotWaitForTheWrite: a line is taken while the output is stuck in a write,
// and every line reaches the output, whole and in order, once Close returns.
func TestLinesDoNotWaitForTheWrite(t *testing.T) {
	out := newGate()
	s := New(out)
	if _, err := s.Write([]byte("first\n")); err != nil {
		t.Fatal(err)
	}
	<-out.entered // the writer is stuck writing "first"
	// These return although the output takes nothing: with a write per line they
	// would block here forever.
	const writers, lines = 8, 200
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range lines {
				fmt.Fprintf(s, "w%d line %d\n", w, i)
			}
		})
	}
	wg.Wait()
	close(out.open)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	got := strings.Split(strings.TrimSuffix(out.got.String(), "\n"), "\n")
	if len(got) != 1+writers*lines || got[0] != "first" {
		t.Fatalf("%d lines written (first %q), want %d starting with first", len(got), got[0], 1+writers*lines)
	}
	next := make([]int, writers)
	for _, l := range got[1:] {
		var w, i int
		if _, err := fmt.Sscanf(l, "w%d line %d", &w, &i); err != nil || i != next[w] {
			t.Fatalf("line %q: out of order or torn (want line %d of w%d)", l, next[w], w)
		}
		next[w]++
	}
}

// TestWritesAfterCloseGoStraightOut: a line logged while the process exits, after the
// sink was closed, is still written.
func TestWritesAfterCloseGoStraightOut(t *testing.T) {
	var out bytes.Buffer
	s := New(&out)
	fmt.Fprintln(s, "before")
	s.Close()
	fmt.Fprintln(s, "after")
	s.Close()
	if out.String() != "before\nafter\n" {
		t.Fatalf("wrote %q", out.String())
	}
}
