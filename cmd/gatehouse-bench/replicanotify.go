package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// eventsChannel is the Postgres channel on which replicas announce the event log rows
// they wrote, by id (internal/stream's pgEventsChannel): each replica's listener reads
// the rows named back from the database and hands them to its streams.
const eventsChannel = "gatehouse_events"

// Ramp shape: each step offers one rate for rampStep, the first rampFirst a second,
// each next one half as much again, up to rampLast; after a step's last NOTIFY its
// events have rampDrain to reach every stream.
const (
	rampFirst = 500
	rampLast  = 40000
	rampStep  = time.Second
	rampDrain = 3 * time.Second
	// rampGrowth is how much more the last tenth of a step's notifications lagged
	// than its first tenth (medians) before the listeners count as behind: a backlog
	// grows through the step, noise does not. At 1.1× a listener's capacity a
	// one-second step's lag grows by about 90 ms.
	rampGrowth = 50 * time.Millisecond
)

// rampStepFigures are one step of the NOTIFY ramp.
type rampStepFigures struct {
	Offered int     // notifications per second asked of the sender
	Sent    float64 // what it achieved
	// Per replica: delivered of the step's notifications within rampDrain, the rate
	// they reached its stream at (count over first sent → last delivered), the
	// lag's p50 and p99, its growth over the step, and whether the stream was dropped.
	Delivered      [3]int
	Rate           [3]float64
	P50, P99, Grew [3]time.Duration
	Dropped        [3]bool
	N              int
}

// behind reports whether some replica's stream fell behind in this step.
func (s rampStepFigures) behind() bool {
	for i := range s.Delivered {
		if s.Dropped[i] || s.Delivered[i] < s.N || s.Grew[i] > rampGrowth {
			return true
		}
	}
	return false
}

// slowest is the replica whose stream fared worst in the step.
func (s rampStepFigures) slowest() int {
	w := 0
	for i := range s.Delivered {
		if s.Delivered[i] < s.Delivered[w] || (s.Delivered[i] == s.Delivered[w] && s.Rate[i] < s.Rate[w]) {
			w = i
		}
	}
	return w
}

// notifyRamp drives NOTIFY on eventsChannel directly, at rising rates, and times each
// notification to a stream on each of the three replicas, until a stream falls
// behind. Each notification names one event log row, as a park or verdict's does:
// the rows are made up (a session of their own, type bench.notify, inserted ahead of
// the ramp and given sequence numbers past the session's, so the streams forward
// them), so the sender is not held back by Gatehouse's own write path. What is
// measured is the listener's path — NOTIFY delivered, the rows read back from the
// database, handed to the stream — on three replicas sharing two cores with the
// database and the bench.
func notifyRamp(reps [3]*proc, db *sql.DB, sid string) ([]rampStepFigures, error) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	hc := newHTTP(8)
	defer hc.CloseIdleConnections()
	var chans [3]<-chan arrival
	for i, r := range reps {
		st, ch, err := openWatched(ctx, hc, r.URL, sid)
		if err != nil {
			return nil, fmt.Errorf("the stream on %s: %w", replicaNames[i], err)
		}
		defer st.close()
		chans[i] = ch
	}
	total := 0
	for r := rampFirst; r <= rampLast; r = r * 3 / 2 {
		total += int(float64(r) * rampStep.Seconds())
	}
	ids, err := madeUpEvents(ctx, db, sid, total)
	if err != nil {
		return nil, err
	}
	// Arrival times by the event's number (1-based), one slice per replica, written
	// by one reader each under its lock; got counts them.
	var arrived [3][]time.Time
	var arrivedMu [3]sync.Mutex
	var got [3]atomic.Int64
	var ended [3]atomic.Bool
	for i := range reps {
		arrived[i] = make([]time.Time, total+1)
		go func(i int) {
			for a := range chans[i] {
				if a.typ != "bench.notify" {
					continue
				}
				var ev struct{ N int }
				if json.Unmarshal([]byte(a.data), &ev) != nil || ev.N < 1 || ev.N > total {
					continue
				}
				arrivedMu[i].Lock()
				if arrived[i][ev.N].IsZero() {
					arrived[i][ev.N] = a.at
					got[i].Add(1)
				}
				arrivedMu[i].Unlock()
			}
			ended[i].Store(true)
		}(i)
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	sentAt := make([]time.Time, total+1)
	var steps []rampStepFigures
	next := 1 // the next event to announce
	for rate := rampFirst; rate <= rampLast; rate = rate * 3 / 2 {
		n := int(float64(rate) * rampStep.Seconds())
		first := next
		s := rampStepFigures{Offered: rate, N: n}
		var before [3]int64
		for i := range got {
			before[i] = got[i].Load()
		}
		start := time.Now()
		for next < first+n {
			due := min(first+int(float64(rate)*time.Since(start).Seconds()), first+n)
			if due <= next {
				time.Sleep(time.Millisecond) // pacing the sender, not synchronising
				continue
			}
			at := time.Now()
			if _, err := conn.ExecContext(ctx, `SELECT count(pg_notify('`+eventsChannel+`', id::text)) FROM unnest($1::bigint[]) AS id`, ids[next-1:due-1]); err != nil {
				return steps, fmt.Errorf("pg_notify: %w", err)
			}
			for k := next; k < due; k++ {
				sentAt[k] = at
			}
			next = due
		}
		s.Sent = float64(n) / time.Since(start).Seconds()
		drain := time.Now().Add(rampDrain)
		for time.Now().Before(drain) {
			all := true
			for i := range got {
				all = all && (got[i].Load()-before[i] >= int64(n) || ended[i].Load())
			}
			if all {
				break
			}
			time.Sleep(5 * time.Millisecond) // polling the readers' counts, bounded by drain
		}
		for i := range reps {
			s.Dropped[i] = ended[i].Load()
			var lags []time.Duration
			var lastAt time.Time
			tenth := max(n/10, 1)
			var head, tail []time.Duration
			arrivedMu[i].Lock()
			for k := first; k < first+n; k++ {
				at := arrived[i][k]
				if at.IsZero() {
					continue
				}
				lag := at.Sub(sentAt[k])
				lags = append(lags, lag)
				if at.After(lastAt) {
					lastAt = at
				}
				switch {
				case k < first+tenth:
					head = append(head, lag)
				case k >= first+n-tenth:
					tail = append(tail, lag)
				}
			}
			arrivedMu[i].Unlock()
			s.Delivered[i] = len(lags)
			if len(lags) > 0 {
				s.Rate[i] = float64(len(lags)) / lastAt.Sub(sentAt[first]).Seconds()
				s.P50[i], s.P99[i] = percentile(lags, 50), percentile(lags, 99)
				s.Grew[i] = percentile(tail, 50) - percentile(head, 50)
			}
		}
		steps = append(steps, s)
		if s.behind() {
			break
		}
	}
	return steps, nil
}

// madeUpEvents appends n bench.notify events (data {"n": 1…n}) to session sid's log,
// numbered past its last sequence number, moves the session's counter past them, and
// returns their ids in order.
func madeUpEvents(ctx context.Context, db *sql.DB, sid string, n int) ([]int64, error) {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	var head int64
	if err := tx.QueryRowContext(ctx, `SELECT event_seq FROM sessions WHERE id = $1 FOR UPDATE`, sid).Scan(&head); err != nil {
		return nil, fmt.Errorf("session's sequence: %w", err)
	}
	rows, err := tx.QueryContext(ctx, `INSERT INTO session_events (session_id, seq, type, data, created_at)
		SELECT $1, $2::bigint + g, 'bench.notify', json_build_object('n', g)::text, now() FROM generate_series(1, $3::int) AS g
		RETURNING id, seq`, sid, head, n)
	if err != nil {
		return nil, fmt.Errorf("insert events: %w", err)
	}
	ids := make([]int64, n)
	for rows.Next() {
		var id, seq int64
		if err := rows.Scan(&id, &seq); err != nil {
			rows.Close()
			return nil, err
		}
		ids[seq-head-1] = id
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE sessions SET event_seq = $1 WHERE id = $2`, head+int64(n), sid); err != nil {
		return nil, err
	}
	return ids, tx.Commit()
}

// rampRows adds the ramp's result: the highest rate every stream kept up with, and
// what the first one they did not looked like.
func rampRows(t *table, steps []rampStepFigures) {
	if len(steps) == 0 {
		return
	}
	var kept *rampStepFigures
	for i := range steps {
		if !steps[i].behind() {
			kept = &steps[i]
		}
	}
	last := steps[len(steps)-1]
	keptCell := "none (behind from the first step)"
	if kept != nil {
		w := kept.slowest()
		keptCell = fmt.Sprintf("%.0f/s (slowest lag p50 %s, p99 %s)", kept.Sent, fmtDur(kept.P50[w]), fmtDur(kept.P99[w]))
	}
	behindCell := fmt.Sprintf("none up to %.0f/s", last.Sent)
	if last.behind() {
		w := last.slowest()
		behindCell = fmt.Sprintf("at %.0f/s: %s %s", last.Sent, replicaNames[w], stepState(last, w))
	}
	t.row(replicasDB, "NOTIFY → every replica's stream: kept up with", keptCell, behindCell, "—", "—")
	parts := make([]string, 0, len(steps))
	for _, s := range steps {
		each := make([]string, 0, len(s.Delivered))
		for i := range s.Delivered {
			each = append(each, replicaNames[i]+" "+stepState(s, i))
		}
		parts = append(parts, fmt.Sprintf("offered %d/s, sent %.0f/s: %s", s.Offered, s.Sent, strings.Join(each, ", ")))
	}
	t.note(replicasDB, fmt.Sprintf("NOTIFY ramp (one event log row per notification on %s, each read back by every replica; %s steps; behind = a stream dropped, "+
		"a notification not on every stream within %s, or the lag's median growing by over %s from a step's first tenth to its last): %s",
		eventsChannel, rampStep, rampDrain, rampGrowth, strings.Join(parts, "; ")))
}

// stepState is one replica's stream in a step, in words.
func stepState(s rampStepFigures, i int) string {
	out := fmt.Sprintf("%d/%d at %.0f/s, lag p50 %s p99 %s", s.Delivered[i], s.N, s.Rate[i], fmtDur(s.P50[i]), fmtDur(s.P99[i]))
	if s.Dropped[i] {
		out += ", stream dropped"
	}
	return out
}
