package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// arrival is one event a stream delivered, stamped when the bench read it.
type arrival struct {
	typ, data string
	at        time.Time
}

// watch reads st until it ends and sends each event on the channel it returns,
// which is closed when the stream ends (the server dropped it, or it was closed).
// The buffer is large so that reading never waits for the consumer: a stream the
// bench stopped reading would be dropped by the server as too slow.
func watch(st *sse) <-chan arrival {
	ch := make(chan arrival, 1<<16)
	go func() {
		defer close(ch)
		for {
			typ, data, err := st.next()
			if err != nil {
				return
			}
			ch <- arrival{typ: typ, data: data, at: time.Now()}
		}
	}()
	return ch
}

// openWatched opens a session's stream on a replica, waits for its first heartbeat
// (from then on it sees everything published) and watches it.
func openWatched(ctx context.Context, hc *http.Client, base, sid string) (*sse, <-chan arrival, error) {
	st, err := openSSE(ctx, hc, base+"/v1/sessions/"+sid+"/stream")
	if err != nil {
		return nil, nil, err
	}
	if _, err := st.waitFor("session.heartbeat"); err != nil {
		st.close()
		return nil, nil, err
	}
	return st, watch(st), nil
}

// waitPrompt reads ch until the prompt eid's request event arrives and returns when
// it did.
func waitPrompt(ch <-chan arrival, eid string, timeout time.Duration) (time.Time, error) {
	deadline := time.After(timeout)
	for {
		select {
		case a, ok := <-ch:
			if !ok {
				return time.Time{}, fmt.Errorf("the stream ended")
			}
			if a.typ != "response.elicitation_request" {
				continue
			}
			var ev struct {
				ID string `json:"elicitation_id"`
			}
			if json.Unmarshal([]byte(a.data), &ev) == nil && ev.ID == eid {
				return a.at, nil
			}
		case <-deadline:
			return time.Time{}, fmt.Errorf("not there after %s", timeout)
		}
	}
}

// roundFigures are the park → verdict rounds across three replicas.
type roundFigures struct {
	// Wake is verdict sent on A → the hook parked on C answered; WakeSame the same
	// with the verdict sent on C itself (the one-replica baseline, interleaved).
	Wake, WakeSame []time.Duration
	// OnB and OnC are hook posted on C → its prompt on B's stream and on C's own
	// (every round).
	OnB, OnC []time.Duration
	// Rounds were run (of both kinds); Woken answered correctly.
	Rounds, Woken int
	// Failures say how rounds failed (the first few).
	Failures []string
	Stopped  bool // too many failures: the rounds stopped early
}

// roundWait bounds each wait of a round: a prompt reaching a stream, a hook waking.
const roundWait = 10 * time.Second

// maxRoundFailures stops the rounds once this many failed: a broken wake-up path
// would otherwise take roundWait per round.
const maxRoundFailures = 5

// replicaRounds runs n rounds of: a hook parks on C; its prompt is timed to B's and
// C's streams; the verdict is sent on A and timed to the hook's answer. same more
// rounds, spread among them, send the verdict on C itself instead.
func replicaRounds(reps [3]*proc, sid string, n, same int) (roundFigures, error) {
	a, b, c := reps[0], reps[1], reps[2]
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	hc := newHTTP(8)
	defer hc.CloseIdleConnections()
	stB, onB, err := openWatched(ctx, hc, b.URL, sid)
	if err != nil {
		return roundFigures{}, fmt.Errorf("the stream on B: %w", err)
	}
	defer stB.close()
	stC, onC, err := openWatched(ctx, hc, c.URL, sid)
	if err != nil {
		return roundFigures{}, fmt.Errorf("the stream on C: %w", err)
	}
	defer stC.close()
	// The agent's hooks come from a client of their own, as in use (see
	// gatehouseResolveLatency).
	agent := newHTTP(4)
	defer agent.CloseIdleConnections()
	var f roundFigures
	fail := func(i int, what string) {
		if len(f.Failures) < 3 {
			f.Failures = append(f.Failures, fmt.Sprintf("round %d: %s", i+1, what))
		}
	}
	total := n + same
	for i := 0; i < total; i++ {
		if f.Rounds-f.Woken >= maxRoundFailures {
			f.Stopped = true
			break
		}
		f.Rounds++
		// Bresenham: the same-replica rounds spread evenly among the others.
		sameRound := (i+1)*same/total != i*same/total
		decider := a
		if sameRound {
			decider = c
		}
		rctx, rcancel := context.WithTimeout(ctx, 3*roundWait)
		eid := benchID()
		answered := make(chan error, 1)
		var answerAt time.Time
		parkAt := time.Now()
		go func() {
			code, body, err := postJSON(rctx, agent, c.URL+"/v1/sessions/"+sid+"/hooks/permission-request", hookBody(eid))
			answerAt = time.Now()
			if err == nil && (code != http.StatusOK || !strings.Contains(string(body), `"behavior":"allow"`)) {
				err = fmt.Errorf("hook answered %d %.200s", code, body)
			}
			answered <- err
		}()
		atB, errB := waitPrompt(onB, eid, roundWait)
		atC, errC := waitPrompt(onC, eid, roundWait)
		if errB != nil || errC != nil {
			fail(i, fmt.Sprintf("the prompt on B's stream: %v; on C's: %v", errB, errC))
			rcancel()
			continue
		}
		t0 := time.Now()
		code, body, err := postJSON(rctx, hc, decider.URL+"/v1/sessions/"+sid+"/elicitations/"+eid+"/resolve", map[string]any{"action": "accept"})
		if err != nil || code != http.StatusAccepted {
			fail(i, fmt.Sprintf("resolve answered %d %.200s %v", code, body, err))
			rcancel()
			continue
		}
		select {
		case err = <-answered:
		case <-time.After(roundWait):
			err = fmt.Errorf("the hook parked on C was not answered within %s of the verdict", roundWait)
		}
		rcancel()
		if err != nil {
			fail(i, err.Error())
			continue
		}
		f.Woken++
		f.OnB = append(f.OnB, atB.Sub(parkAt))
		f.OnC = append(f.OnC, atC.Sub(parkAt))
		if sameRound {
			f.WakeSame = append(f.WakeSame, answerAt.Sub(t0))
		} else {
			f.Wake = append(f.Wake, answerAt.Sub(t0))
		}
	}
	return f, nil
}

// roundRows adds the rounds' rows: whether every request woke, then the figures.
func roundRows(t *table, f roundFigures) {
	t.row(replicasDB, "park on C → verdict on A: hooks answered", fmt.Sprintf("%d/%d", f.Woken, f.Rounds), "—", "—",
		verdict("all", f.Woken == f.Rounds && !f.Stopped))
	if f.Woken != f.Rounds || f.Stopped {
		why := strings.Join(f.Failures, "; ")
		if f.Stopped {
			why += fmt.Sprintf("; stopped after %d failed rounds", maxRoundFailures)
		}
		t.note(replicasDB, "why park on C → verdict on A missed: "+why)
	}
	pair := func(measure string, got, base []time.Duration, baseName string) {
		for _, p := range []float64{50, 99} {
			g, s := percentile(got, p), percentile(base, p)
			t.row(replicasDB, fmt.Sprintf("%s p%g", measure, p), fmtDur(g), fmt.Sprintf("%s %s", baseName, fmtDur(s)), ratio(g, s), "—")
		}
	}
	pair(fmt.Sprintf("verdict on A → hook on C answered (n=%d)", len(f.Wake)), f.Wake, f.WakeSame, fmt.Sprintf("verdict on C (n=%d)", len(f.WakeSame)))
	pair("park on C → prompt on B's stream", f.OnB, f.OnC, "on C's stream")
}
