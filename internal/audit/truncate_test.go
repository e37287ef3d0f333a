package audit_test

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/audit"
	"github.com/gatehouse-dev/gatehouse/internal/store"
	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
)

// truncate deletes the chain's rows after keep, and their prompts, and rewinds the
// head to row keep — what someone with write access to the database does to make
// the last decisions disappear.
func truncate(t *testing.T, db testserver.DB, st *store.Store, keep int) {
	t.Helper()
	exec := sqlExec(t, db, st)
	rows := chain(t, st)
	for _, r := range rows[keep:] {
		exec(`DELETE FROM audit_chain WHERE seq = ?`, r.Seq)
		exec(`DELETE FROM elicitations WHERE id = ?`, r.ElicitationID)
	}
	exec(`UPDATE audit_head SET seq = ?, prev_hash = ?, hash = ? WHERE id = 1`, keep, rows[keep-1].PrevHash, rows[keep-1].Hash)
}

func verifyAgainst(t *testing.T, st *store.Store, anchors ...audit.Anchor) *audit.Problem {
	t.Helper()
	res, err := audit.Verify(context.Background(), st, anchors...)
	if err != nil {
		t.Fatal(err)
	}
	return res.Problem
}

func head(t *testing.T, v string) audit.Anchor {
	t.Helper()
	a, err := audit.ParseHead(v)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestVerifyDetectsATruncatedChainAgainstAHead: after the last rows (and their
// prompts) are deleted and the head rewound, the chain holds on its own — but not
// against the head recorded before, as SEQ:HASH or as a bare HASH; and a chain
// rewritten from a row on does not hold against that row's recorded hash.
func TestVerifyDetectsATruncatedChainAgainstAHead(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		st := testserver.OpenStore(t, db.NewURL(t))
		sess := newSession(t, st, "")
		decideAll(t, st, sess, park(t, st, sess, "h", 5), decline("alice"))
		before := verify(t, st)
		third := chain(t, st)[2]
		if before.Problem != nil || before.HeadSeq != 5 {
			t.Fatalf("verify: %+v", before)
		}
		recorded := head(t, "5:"+before.HeadHash)
		truncate(t, db, st, 3)
		if p := verifyAgainst(t, st); p != nil {
			t.Fatalf("the cut chain on its own: %v", p) // why a head must be kept elsewhere
		}
		p := verifyAgainst(t, st, recorded)
		if p == nil || p.Seq != 5 || !strings.Contains(p.Reason, "chain ends at seq 3") || !strings.Contains(p.Reason, "truncated") {
			t.Fatalf("against the recorded head: %v", p)
		}
		if p := verifyAgainst(t, st, head(t, strings.ToUpper(before.HeadHash))); p == nil || !strings.Contains(p.Reason, "no row of the chain") {
			t.Fatalf("against the recorded bare hash: %v", p)
		}
		if p := verifyAgainst(t, st, head(t, "3:"+third.Hash), head(t, third.Hash), head(t, "0:"+audit.Genesis)); p != nil {
			t.Fatalf("against heads the chain still reaches: %v", p)
		}

		// Rewritten from row 3 on (its hash recomputed, the head moved): holds alone,
		// not against row 3's recorded hash.
		exec := sqlExec(t, db, st)
		exec(`UPDATE elicitations SET action = 'accept' WHERE id = ?`, third.ElicitationID)
		edited := chain(t, st)[2]
		h := audit.LinkV2(&edited.Entry, false, edited.PrevHash)
		exec(`UPDATE audit_chain SET hash = ? WHERE seq = 3`, h)
		exec(`UPDATE audit_head SET hash = ? WHERE id = 1`, h)
		if p := verifyAgainst(t, st); p != nil {
			t.Fatalf("the rewritten chain on its own: %v", p)
		}
		if p := verifyAgainst(t, st, head(t, "3:"+third.Hash)); p == nil || p.Seq != 3 || p.ElicitationID != third.ElicitationID || !strings.Contains(p.Reason, "rewritten") {
			t.Fatalf("the rewritten chain against row 3's head: %v", p)
		}
	})
}

func TestParseHeadRefusesWhatIsNotAHead(t *testing.T) {
	for _, v := range []string{"", "abc", "x:" + audit.Genesis, "-1:" + audit.Genesis, "0:" + strings.Repeat("a", 64),
		"3:" + strings.Repeat("g", 64), strings.Repeat("a", 63), "3:" + strings.Repeat("a", 65)} {
		if _, err := audit.ParseHead(v); err == nil {
			t.Errorf("ParseHead(%q) accepted", v)
		}
	}
}

// fakeClock is the checkpointer's injected clock.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// lockedBuffer is a log destination two goroutines may write.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}
func (l *lockedBuffer) String() string { l.mu.Lock(); defer l.mu.Unlock(); return l.b.String() }

// TestDailyCheckpointsOneReplicaPerDayDetectTruncation: two replicas (two stores on
// one database, one injected clock) tick at once: each day exactly one of them takes
// the signed checkpoint, logs it at INFO as one line and appends it to its file; a
// second tick the same day adds nothing, the next day adds one. The checkpoints
// verify with the public key alone, and once the chain's last rows are deleted and
// its head rewound, verify against them names the checkpoint the chain no longer
// reaches. A checkpoint edited in the file, or signed by another key, is refused.
func TestDailyCheckpointsOneReplicaPerDayDetectTruncation(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		ctx := context.Background()
		url := db.NewURL(t)
		a := testserver.OpenStore(t, url)
		b, err := store.Open(url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { b.Close() })
		clock := &fakeClock{t: time.Date(2026, 3, 1, 0, 0, 30, 0, time.UTC)}
		signer := audit.NewSigner([]byte(testserver.TestSessionSecret))
		dir := t.TempDir()
		var logs lockedBuffer
		log := slog.New(slog.NewTextHandler(&logs, nil))
		files := []string{filepath.Join(dir, "a.jsonl"), filepath.Join(dir, "b.jsonl")}
		replicas := []*audit.Checkpointer{
			audit.NewCheckpointer(a, signer, clock.Now, log, files[0]),
			audit.NewCheckpointer(b, signer, clock.Now, log, files[1]),
		}
		tickAll := func() int {
			t.Helper()
			var wg sync.WaitGroup
			var mu sync.Mutex
			took := 0
			for _, r := range replicas {
				wg.Add(1)
				go func() {
					defer wg.Done()
					cp, err := r.Tick(ctx)
					if err != nil {
						t.Error(err)
					}
					if cp != nil {
						mu.Lock()
						took++
						mu.Unlock()
					}
				}()
			}
			wg.Wait()
			return took
		}
		lines := func() []audit.Checkpoint {
			t.Helper()
			var all []audit.Checkpoint
			for _, f := range files {
				body, err := os.ReadFile(f)
				if os.IsNotExist(err) {
					continue
				}
				cps, err := audit.ReadCheckpoints(bytes.NewReader(body))
				if err != nil {
					t.Fatal(err)
				}
				all = append(all, cps...)
			}
			return all
		}
		logged := func() int { return strings.Count(logs.String(), `level=INFO msg="audit checkpoint"`) }

		sess := newSession(t, a, "")
		ids := park(t, a, sess, "d", 4)
		decideAll(t, a, sess, ids[:2], decline("alice"))
		if took := tickAll(); took != 1 || len(lines()) != 1 || logged() != 1 {
			t.Fatalf("day 1: %d replicas took it, %d file lines, %d log lines\n%s", took, len(lines()), logged(), logs.String())
		}
		clock.Add(20 * time.Hour)
		if took := tickAll(); took != 0 || len(lines()) != 1 || logged() != 1 {
			t.Fatalf("day 1 again: %d took it, %d lines", took, len(lines()))
		}
		decideAll(t, b, sess, ids[2:], decline("bob"))
		clock.Add(4 * time.Hour) // 2026-03-02T00:00:30Z
		if took := tickAll(); took != 1 || len(lines()) != 2 || logged() != 2 {
			t.Fatalf("day 2: %d took it, %d lines", took, len(lines()))
		}
		cps := lines()
		if cps[0].Day > cps[1].Day {
			cps[0], cps[1] = cps[1], cps[0]
		}
		if cps[0].Day != "2026-03-01" || cps[0].Seq != 2 || cps[1].Seq != 4 || cps[1].Time != "2026-03-02T00:00:30.000000Z" {
			t.Fatalf("checkpoints: %+v", cps)
		}
		if latest, err := b.LatestAuditCheckpoint(ctx); err != nil || *latest != cps[1] {
			t.Fatalf("latest stored checkpoint %+v %v; the file's %+v", latest, err, cps[1])
		}
		pub, err := audit.ParsePublicKey(signer.PublicKey())
		if err != nil {
			t.Fatal(err)
		}
		anchors, err := audit.Anchors(cps, pub, "files")
		if err != nil {
			t.Fatal(err)
		}
		if p := verifyAgainst(t, a, anchors...); p != nil {
			t.Fatalf("intact chain against its checkpoints: %v", p)
		}

		truncate(t, db, a, 3)
		p := verifyAgainst(t, a, anchors...)
		if p == nil || p.Seq != 4 || !strings.Contains(p.Reason, "checkpoint 2026-03-02") || !strings.Contains(p.Reason, "truncated") {
			t.Fatalf("cut chain against its checkpoints: %v", p)
		}

		forged := cps[1]
		forged.Seq = 3
		if _, err := audit.Anchors([]audit.Checkpoint{cps[0], forged}, pub, "files"); err == nil || !strings.Contains(err.Error(), "signature does not verify") {
			t.Fatalf("an edited checkpoint: %v", err)
		}
		other := audit.NewSigner([]byte("another server's secret, 32 chars+"))
		foreign := audit.Checkpoint{Day: "2026-03-02", Seq: 3, Hash: chain(t, a)[2].Hash, Time: cps[1].Time}
		other.Sign(&foreign)
		if _, err := audit.Anchors([]audit.Checkpoint{foreign}, pub, "files"); err == nil {
			t.Fatal("a checkpoint signed by another key was accepted")
		}
	})
}
