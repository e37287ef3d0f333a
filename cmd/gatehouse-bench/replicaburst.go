package main

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"sync"
	"time"
)

// burstFigures are what parking many requests at once across the replicas, then
// deciding them all, showed.
type burstFigures struct {
	Parked, Correct int
	// ParkRate is prompts per second from the first hook posted to the last prompt on
	// B's stream; VerdictRate verdicts per second from the first verdict sent to the
	// last hook answered.
	ParkRate, VerdictRate float64
	// Peak is the most connections seen on the database during the burst (sampled
	// every 50 ms); PeakBy each replica's most.
	Peak   connCount
	PeakBy map[string]int
}

// burstResolvers send the burst's verdicts at once, spread over the replicas.
const burstResolvers = 48

// replicaBurst parks n hooks at once, spread over reps (prompt i on reps[i%len]),
// waits until the stream on watcher has every prompt, then decides them all from
// burstResolvers connections — prompt i on reps[(i+1)%len], so with several replicas
// on one other than the one it is parked on; alternately accepted and declined — and
// checks every answer. Meanwhile it samples the database's connections.
func replicaBurst(reps []*proc, watcher *proc, db *sql.DB, sid string, n int) (burstFigures, error) {
	f := burstFigures{Parked: n}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	hc := newHTTP(n + burstResolvers + 8)
	defer hc.CloseIdleConnections()
	st, onB, err := openWatched(ctx, hc, watcher.URL, sid)
	if err != nil {
		return f, fmt.Errorf("the stream: %w", err)
	}
	defer st.close()

	conns := sampleConns(db)
	defer conns.finish()

	ids := make([]string, n)
	results := make([]string, n)
	want := map[string]bool{}
	var wg sync.WaitGroup
	t0 := time.Now()
	for i := range ids {
		ids[i] = benchID()
		want[ids[i]] = true
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			code, body, err := postJSON(ctx, hc, reps[i%len(reps)].URL+"/v1/sessions/"+sid+"/hooks/permission-request", hookBody(ids[i]))
			if err != nil {
				results[i] = "error: " + err.Error()
				return
			}
			results[i] = fmt.Sprintf("%d %s", code, body)
		}(i)
	}
	answered := make(chan struct{})
	go func() { wg.Wait(); close(answered) }()
	seen, last := 0, time.Time{}
	deadline := time.After(2 * time.Minute)
	for seen < n {
		select {
		case a, ok := <-onB:
			if !ok {
				return f, fmt.Errorf("the stream ended after %d of %d prompts", seen, n)
			}
			if a.typ == "response.elicitation_request" && strings.Contains(a.data, "elicit_bench_") {
				seen++
				last = a.at
			}
		case <-answered:
			return f, fmt.Errorf("every hook answered before its verdict (%d of %d prompts on the stream): %.200s", seen, n, results[0])
		case <-deadline:
			return f, fmt.Errorf("only %d of %d prompts on the stream after 2 minutes", seen, n)
		}
	}
	f.ParkRate = float64(n) / last.Sub(t0).Seconds()

	work := make(chan int)
	var rw sync.WaitGroup
	v0 := time.Now()
	for w := 0; w < burstResolvers; w++ {
		rw.Add(1)
		go func() {
			defer rw.Done()
			for i := range work {
				postJSON(ctx, hc, reps[(i+1)%len(reps)].URL+"/v1/sessions/"+sid+"/elicitations/"+ids[i]+"/resolve", map[string]any{"action": alternateVerdict(i)})
			}
		}()
	}
	for i := range ids {
		work <- i
	}
	close(work)
	select {
	case <-answered:
	case <-time.After(2 * time.Minute):
		return f, fmt.Errorf("not every parked request answered within 2 minutes of the verdicts")
	}
	f.VerdictRate = float64(n) / time.Since(v0).Seconds()
	rw.Wait()
	f.Peak, f.PeakBy = conns.finish()
	f.Correct = answeredCorrectly(results)
	return f, nil
}

// alternateVerdict is the verdict the bench gives the i-th of many parked prompts:
// accept, decline, accept, … — so an answer crossed with another's shows.
func alternateVerdict(i int) string {
	if i%2 == 1 {
		return "decline"
	}
	return "accept"
}

// answeredCorrectly counts the hooks whose answer ("CODE BODY") is the one
// alternateVerdict(i) calls for (answeredAsAsked).
func answeredCorrectly(results []string) int {
	n := 0
	for i, r := range results {
		if answeredAsAsked(i, r) {
			n++
		}
	}
	return n
}

// answeredAsAsked reports whether the i-th hook's answer r ("CODE BODY") is the one
// alternateVerdict(i) calls for: a 200 allowing or denying.
func answeredAsAsked(i int, r string) bool {
	want := `"behavior":"allow"`
	if alternateVerdict(i) == "decline" {
		want = `"behavior":"deny"`
	}
	return strings.HasPrefix(r, "200 ") && strings.Contains(r, want)
}

// burstRows adds the burst's rows: f over the three replicas, one the same burst on
// A alone.
func burstRows(t *table, f, one burstFigures) {
	t.row(replicasDB, fmt.Sprintf("%d parked at once over the 3, decided on another: answered correctly", f.Parked),
		fmt.Sprintf("%d/%d", f.Correct, f.Parked), fmt.Sprintf("on A alone %d/%d", one.Correct, one.Parked), "—",
		verdict("all", f.Correct == f.Parked && one.Correct == one.Parked))
	rate := func(measure string, got, base float64) {
		t.row(replicasDB, measure, fmt.Sprintf("%.0f/s", got), fmt.Sprintf("on A alone %.0f/s", base), fmt.Sprintf("%.2f×", got/base), "—")
	}
	rate("  parks/s, to the last prompt on B's stream", f.ParkRate, one.ParkRate)
	rate(fmt.Sprintf("  verdicts/s, from %d connections", burstResolvers), f.VerdictRate, one.VerdictRate)
	most := make([]string, 0, len(replicaNames))
	for _, n := range replicaNames {
		most = append(most, fmt.Sprintf("%s %d", n, f.PeakBy["gatehouse-"+n]))
	}
	t.row(replicasDB, "  Postgres connections held, most during the burst", f.Peak.String(),
		"each replica's most: "+strings.Join(most, ", "), "—", "—")
}

// growth is what the database holds per prompt after the rounds and the burst.
type growth struct {
	Prompts, Events                 int64
	EventBytes, PromptBytes, Audits int64 // whole relations: table, indexes, TOAST
}

// logGrowth reads the row counts and on-disk sizes of the event log, the prompts and
// the audit chain.
func logGrowth(db *sql.DB) (growth, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var g growth
	err := db.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM elicitations), (SELECT count(*) FROM session_events),
		pg_total_relation_size('session_events'), pg_total_relation_size('elicitations'), pg_total_relation_size('audit_chain')`).
		Scan(&g.Prompts, &g.Events, &g.EventBytes, &g.PromptBytes, &g.Audits)
	return g, err
}

// growthRows adds what each decided prompt leaves in the database.
func growthRows(t *table, g growth) {
	if g.Prompts == 0 {
		return
	}
	per := func(b int64) string { return fmt.Sprintf("%.2f KiB", float64(b)/float64(g.Prompts)/1024) }
	t.row(replicasDB, fmt.Sprintf("event log per prompt (%d prompts, --event-retention prunes it)", g.Prompts),
		fmt.Sprintf("%.1f rows, %s", float64(g.Events)/float64(g.Prompts), per(g.EventBytes)), "—", "—", "—")
	t.row(replicasDB, "prompt and audit rows per prompt (kept: no retention)",
		fmt.Sprintf("%s + %s", per(g.PromptBytes), per(g.Audits)), "—", "—", "—")
}

// connSampler samples the database's connections every 50 ms until finished.
type connSampler struct {
	stop, done chan struct{}
	once       sync.Once
	peak       connCount
	peakBy     map[string]int
}

func sampleConns(db *sql.DB) *connSampler {
	s := &connSampler{stop: make(chan struct{}), done: make(chan struct{}), peakBy: map[string]int{}}
	go func() {
		defer close(s.done)
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			if c, err := pgConnections(db); err == nil {
				if c.Total > s.peak.Total {
					s.peak = c
				}
				for k, v := range c.By {
					s.peakBy[k] = max(s.peakBy[k], v)
				}
			}
			select {
			case <-s.stop:
				return
			case <-tick.C:
			}
		}
	}()
	return s
}

// finish stops the sampling and returns the most connections seen at once, and each
// application_name's most.
func (s *connSampler) finish() (connCount, map[string]int) {
	s.once.Do(func() { close(s.stop) })
	<-s.done
	return s.peak, s.peakBy
}
