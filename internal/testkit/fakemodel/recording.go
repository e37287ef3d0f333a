package fakemodel

import (
	"slices"
	"sync"
	"testing"
	"time"
)

// recording is what a fake API keeps of an agent's requests: every request, and the
// distinct results of the scripted tool call the agent sent back, in the order they
// first came (agents resend the whole conversation every turn, so each result is kept
// once). A test waits on it for the agent's first result. The fakes of the
// Responses, chat-completions and Gemini APIs share it; R is their request record.
type recording[R any] struct {
	mu       sync.Mutex
	requests []R
	results  []string
	changed  chan struct{} // closed and replaced whenever a request is recorded
}

func newRecording[R any]() recording[R] {
	return recording[R]{changed: make(chan struct{})}
}

// record keeps r and, when hasResult, result (once), and wakes waitResult.
func (c *recording[R]) record(r R, result string, hasResult bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.requests = append(c.requests, r)
	if hasResult && !slices.Contains(c.results, result) {
		c.results = append(c.results, result)
	}
	close(c.changed)
	c.changed = make(chan struct{})
}

// Requests returns every request recorded so far.
func (c *recording[R]) Requests() []R {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.requests)
}

// resultsSoFar returns the distinct results recorded so far, in order.
func (c *recording[R]) resultsSoFar() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.results)
}

// waitResult waits for the first result, failing the test after within with what
// (the protocol's word for a result) and summary (the requests recorded).
func (c *recording[R]) waitResult(t testing.TB, within time.Duration, what string, summary func() string) string {
	t.Helper()
	deadline := time.After(within)
	for {
		c.mu.Lock()
		ch := c.changed
		if len(c.results) > 0 {
			r := c.results[0]
			c.mu.Unlock()
			return r
		}
		c.mu.Unlock()
		select {
		case <-ch:
		case <-deadline:
			t.Fatalf("the model got no %s within %s; requests:\n%s", what, within, summary())
			return ""
		}
	}
}
