package elicit

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/gatehouse-dev/gatehouse/models"
)

// TestGroupCommitSharesCommits: rows that arrive while a commit is under way go into the
// next commit together, every row is committed exactly once, and each request hears of
// its own row's commit.
func TestGroupCommitSharesCommits(t *testing.T) {
	const n = 64
	var commits, rows atomic.Int64
	inCommit := make(chan struct{})
	release := make(chan struct{})
	var first sync.Once
	g := &groupCommit{commit: func(_ context.Context, batch []*queuedRow) error {
		commits.Add(1)
		rows.Add(int64(len(batch)))
		first.Do(func() { close(inCommit); <-release }) // the first commit waits for the rest to queue
		for _, q := range batch {
			q.stored = q.row
		}
		return nil
	}}
	lead := &queuedRow{row: &models.Elicitation{ID: "lead"}}
	go func() { _, _ = g.store(context.Background(), lead) }()
	<-inCommit
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			q := &queuedRow{row: &models.Elicitation{ID: string(rune('a' + i))}}
			got, err := g.store(context.Background(), q)
			if err != nil || got != q.row {
				t.Errorf("row %d: got %v, %v", i, got, err)
			}
		}()
	}
	for {
		g.mu.Lock()
		queued := len(g.queue)
		g.mu.Unlock()
		if queued == n {
			break
		}
		runtime.Gosched()
	}
	close(release)
	wg.Wait()
	if rows.Load() != n+1 || commits.Load() != 2 {
		t.Fatalf("%d rows in %d commits, want %d rows in 2", rows.Load(), commits.Load(), n+1)
	}
}
