package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// healthzLatency times n sequential GET /healthz round trips.
func healthzLatency(hc *http.Client, base string, n int) ([]time.Duration, error) {
	out := make([]time.Duration, 0, n)
	for i := 0; i < n; i++ {
		t0 := time.Now()
		if err := getOK(context.Background(), hc, base+"/healthz"); err != nil {
			return nil, err
		}
		out = append(out, time.Since(t0))
	}
	return out, nil
}

// throughput runs do from conc workers for d and returns completed requests per second.
func throughput(conc int, d time.Duration, do func() error) (float64, error) {
	var n atomic.Int64
	var firstErr atomic.Value
	deadline := time.Now().Add(d)
	var wg sync.WaitGroup
	for w := 0; w < conc; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(deadline) {
				if err := do(); err != nil {
					firstErr.CompareAndSwap(nil, err)
					return
				}
				n.Add(1)
			}
		}()
	}
	wg.Wait()
	if err, ok := firstErr.Load().(error); ok && err != nil {
		return 0, err
	}
	return float64(n.Load()) / d.Seconds(), nil
}

func hookBody(eid string) map[string]any {
	b := map[string]any{
		"session_id": "bench", "transcript_path": "/tmp/t.jsonl", "cwd": "/tmp", "permission_mode": "default",
		"hook_event_name": "PermissionRequest", "tool_name": "Bash", "tool_input": map[string]any{"command": "true"},
	}
	if eid != "" {
		b["_gatehouse_elicitation_id"] = eid
	}
	return b
}

func benchID() string {
	var b [16]byte
	rand.Read(b[:])
	return "elicit_bench_" + hex.EncodeToString(b[:])
}

// gatehouseResolveLatency parks a hook, waits until its prompt is on the stream, then
// times resolve → hook answered, n times. It also returns each park's latency (hook
// posted → prompt on the stream). h (nil: none) runs outside both timings; the
// notifications-on runs wait there for deliveries.
func gatehouseResolveLatency(hc *http.Client, base, sid string, n int, h *latencyHooks) (resolve, park []time.Duration, err error) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st, err := openSSE(ctx, hc, base+"/v1/sessions/"+sid+"/stream")
	if err != nil {
		return nil, nil, err
	}
	defer st.close()
	if _, err := st.waitFor("session.heartbeat"); err != nil {
		return nil, nil, err
	}
	// The agent's hooks come from a client of their own, as in use: the person's
	// verdicts (hc) keep their connection, and a hook answered with Connection: close
	// (internal/held) costs the next park a new connection, not the next verdict.
	agent := newHTTP(4)
	defer agent.CloseIdleConnections()
	out := make([]time.Duration, 0, n)
	park = make([]time.Duration, 0, n)
	for i := 0; i < n; i++ {
		answered := make(chan error, 1)
		var answerAt time.Time
		parkAt := time.Now()
		go func() {
			code, body, err := postJSON(ctx, agent, base+"/v1/sessions/"+sid+"/hooks/permission-request", hookBody(""))
			answerAt = time.Now()
			if err == nil && (code != 200 || !strings.Contains(string(body), `"allow"`)) {
				err = fmt.Errorf("hook answered %d %s", code, body)
			}
			answered <- err
		}()
		data, err := st.waitFor("response.elicitation_request")
		if err != nil {
			return nil, nil, err
		}
		park = append(park, time.Since(parkAt))
		var ev struct {
			ID string `json:"elicitation_id"`
		}
		json.Unmarshal([]byte(data), &ev)
		if h != nil && h.BeforeResolve != nil {
			if err := h.BeforeResolve(ev.ID); err != nil {
				return nil, nil, err
			}
		}
		t0 := time.Now()
		code, _, err := postJSON(ctx, hc, base+"/v1/sessions/"+sid+"/elicitations/"+ev.ID+"/resolve", map[string]any{"action": "accept"})
		if err != nil || code != http.StatusAccepted {
			return nil, nil, fmt.Errorf("resolve: %d %v", code, err)
		}
		if err := <-answered; err != nil {
			return nil, nil, err
		}
		out = append(out, answerAt.Sub(t0))
		if h != nil && h.AfterAnswer != nil {
			if err := h.AfterAnswer(ev.ID); err != nil {
				return nil, nil, err
			}
		}
	}
	return out, park, nil
}

// latencyHooks run inside gatehouseResolveLatency's loop, outside its timings.
type latencyHooks struct {
	// BeforeResolve runs once the prompt is on the stream, before the verdict.
	BeforeResolve func(eid string) error
	// AfterAnswer runs once the hook answered, before the next park.
	AfterAnswer func(eid string) error
}

// capacityResult is what parking many requests at once showed.
type capacityResult struct {
	Parked, Correct int
	KiBPerParked    float64
	// Why is what the server's runtime holds per parked request (Gatehouse only).
	Why string
	// ParkedIn is how long parking all of them took, from the first request sent to
	// the server holding the last (Gatehouse only).
	ParkedIn time.Duration
	// Wrong counts the answers that were not the verdict, by their first words.
	Wrong map[string]int
}

// wrong counts answer r as not the verdict.
func (c *capacityResult) wrong(r string) {
	if c.Wrong == nil {
		c.Wrong = map[string]int{}
	}
	c.Wrong[clipText(r, 120)]++
}

// wrongNote lists the wrong answers, the commonest first.
func (c capacityResult) wrongNote() string {
	type kind struct {
		what string
		n    int
	}
	var ks []kind
	for w, n := range c.Wrong {
		ks = append(ks, kind{w, n})
	}
	sort.Slice(ks, func(i, j int) bool { return ks[i].n > ks[j].n })
	var parts []string
	for i, k := range ks {
		if i == 5 {
			break
		}
		parts = append(parts, fmt.Sprintf("%d× %q", k.n, k.what))
	}
	return strings.Join(parts, "; ")
}

// clipText cuts s to at most n bytes.
func clipText(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// gatehouseCapacity parks n hooks at once, measures the server's memory per parked
// request, then resolves them all (alternating accept/decline) and checks every answer.
func gatehouseCapacity(db string, p *proc, pp *pprofClient, base, sid string, n int) (capacityResult, error) {
	hc := newAbortingHTTP(n + 64)
	defer hc.CloseIdleConnections()
	before, err := p.rssKiB()
	if err != nil {
		return capacityResult{}, err
	}
	runtimeBefore := runtimeGauges(hc, p.MetricsURL)
	ids := make([]string, n)
	results := make([]string, n)
	var wg sync.WaitGroup
	start := time.Now()
	lap := stopwatch(db)
	for i := range ids {
		ids[i] = benchID()
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			code, body, err := postJSON(context.Background(), hc, base+"/v1/sessions/"+sid+"/hooks/permission-request", hookBody(ids[i]))
			if err != nil {
				results[i] = "error: " + err.Error()
				return
			}
			results[i] = fmt.Sprintf("%d %s", code, body)
		}(i)
	}
	// Wait until the server holds all n — parked (its waiter gauge) and stored (its
	// pending gauge) — with a deadline.
	deadline := time.Now().Add(5 * time.Minute)
	for {
		parked, err := gauge(hc, p.MetricsURL, "gatehouse_parked_waiters")
		stored, err2 := gauge(hc, p.MetricsURL, "gatehouse_elicitations_pending")
		if err == nil && err2 == nil && parked >= float64(n) && stored >= float64(n) {
			break
		}
		if time.Now().After(deadline) {
			return capacityResult{}, fmt.Errorf("only %v of %d parked after 5 minutes", parked, n)
		}
		time.Sleep(200 * time.Millisecond) // polling a gauge, not synchronising a test
	}
	parkedIn := time.Since(start)
	lap(fmt.Sprintf("parking %d", n))
	after, err := p.rssKiB()
	if err != nil {
		return capacityResult{}, err
	}
	res := capacityResult{Parked: n, KiBPerParked: float64(after-before) / float64(n), ParkedIn: parkedIn}
	res.Why = whyMemory(runtimeBefore, runtimeGauges(hc, p.MetricsURL), pp, n)
	lap("memory and its profile")
	// Resolve all.
	var rw sync.WaitGroup
	work := make(chan int)
	for w := 0; w < verdictWorkers; w++ {
		rw.Add(1)
		go func() {
			defer rw.Done()
			for i := range work {
				postJSON(context.Background(), hc, base+"/v1/sessions/"+sid+"/elicitations/"+ids[i]+"/resolve", map[string]any{"action": alternateVerdict(i)})
			}
		}()
	}
	for i := range ids {
		work <- i
	}
	close(work)
	rw.Wait()
	lap(fmt.Sprintf("%d verdicts", n))
	answered := make(chan struct{})
	go func() { wg.Wait(); close(answered) }()
	select {
	case <-answered:
	case <-time.After(2 * time.Minute):
		return res, fmt.Errorf("not every parked request answered within 2 minutes of its verdict")
	}
	for i, r := range results {
		if answeredAsAsked(i, r) {
			res.Correct++
		} else {
			res.wrong(r)
		}
	}
	return res, nil
}

// gauge reads one unlabelled gauge from /metrics.
func gauge(hc *http.Client, base, name string) (float64, error) {
	resp, err := hc.Get(base + "/metrics")
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, name+" ") {
			var v float64
			fmt.Sscan(strings.TrimPrefix(line, name+" "), &v)
			return v, nil
		}
	}
	return 0, fmt.Errorf("gauge %s not found", name)
}

// fanout opens subs streams on one session, parks one prompt and measures how long
// each subscriber takes to see it.
func fanout(base, sid string, subs int) (received int, p99 time.Duration, err error) {
	received, lat, err := fanoutRound(base, sid, subs, nil)
	return received, percentile(lat, 99), err
}

// fanoutRound opens subs streams, parks one prompt and returns how many streams had
// it and each one's latency. during, when set, runs with the streams open, the prompt
// parked and delivered while it runs (it is given the function that does so).
func fanoutRound(base, sid string, subs int, during func(publish func() error) error) (received int, lat []time.Duration, err error) {
	hc := newHTTP(subs + 64)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	streams := make([]*sse, subs)
	var wg sync.WaitGroup
	errs := make(chan error, subs)
	sem := make(chan struct{}, 128)
	for i := range streams {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			s, err := openSSE(ctx, hc, base+"/v1/sessions/"+sid+"/stream")
			if err == nil {
				_, err = s.waitFor("session.heartbeat")
			}
			if err != nil {
				errs <- err
				return
			}
			streams[i] = s
		}(i)
	}
	wg.Wait()
	select {
	case err := <-errs:
		return 0, nil, fmt.Errorf("open streams: %w", err)
	default:
	}
	lat = make([]time.Duration, subs)
	var got atomic.Int64
	// Every reader is waiting on its stream before the clock starts: waking 2,000
	// goroutines is the bench's own work, not the server's, and took the client up to
	// 20 ms when they were released with the prompt.
	var t0 atomic.Int64 // when the prompt was sent (UnixNano)
	var rwg, waiting sync.WaitGroup
	for i, s := range streams {
		rwg.Add(1)
		waiting.Add(1)
		go func(i int, s *sse) {
			defer rwg.Done()
			waiting.Done()
			if _, err := s.waitFor("response.elicitation_request"); err == nil {
				lat[i] = time.Duration(time.Now().UnixNano() - t0.Load())
				got.Add(1)
			}
		}(i, s)
	}
	waiting.Wait()
	eid := benchID()
	hook := make(chan struct{})
	publish := func() error {
		t0.Store(time.Now().UnixNano())
		go func() {
			postJSON(context.Background(), hc, base+"/v1/sessions/"+sid+"/hooks/permission-request", hookBody(eid))
			close(hook)
		}()
		done := make(chan struct{})
		go func() { rwg.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
		}
		return nil
	}
	if during != nil {
		err = during(publish)
	} else {
		err = publish()
	}
	postJSON(context.Background(), hc, base+"/v1/sessions/"+sid+"/elicitations/"+eid+"/resolve", map[string]any{"action": "accept"})
	<-hook
	for _, s := range streams {
		s.close()
	}
	ok := lat[:0]
	for _, d := range lat {
		if d > 0 {
			ok = append(ok, d)
		}
	}
	return int(got.Load()), ok, err
}

// runtimeGauges reads the Go runtime's goroutine count and what its memory is made of
// (stacks, heap in use, idle heap and how much of it went back to the OS) from /metrics
// (missing ones read as 0).
func runtimeGauges(hc *http.Client, base string) map[string]float64 {
	out := map[string]float64{}
	for _, name := range []string{"go_goroutines", "go_memstats_stack_inuse_bytes", "go_memstats_heap_inuse_bytes",
		"go_memstats_heap_idle_bytes", "go_memstats_heap_released_bytes"} {
		out[name], _ = gauge(hc, base, name)
	}
	return out
}

// whyMemory says what the server's runtime holds per parked request: goroutines, their
// stacks, and the live heap with the functions that allocated most of it (pprof).
func whyMemory(before, after map[string]float64, pp *pprofClient, n int) string {
	per := func(k string) float64 { return (after[k] - before[k]) / float64(n) }
	why := fmt.Sprintf("per parked request the server holds %.1f goroutines (held off net/http, waiting with none of their own: one goroutine watches every held connection for a hang-up) with %.1f KiB of stacks",
		per("go_goroutines"), per("go_memstats_stack_inuse_bytes")/1024)
	if pp != nil {
		if prof, err := pp.heap(); err == nil {
			live, top := heapTop(prof, n, 5)
			why += fmt.Sprintf(" and %.1f KiB of live heap (whole process, after a collection; pprof), most of it from %s", live, top)
		}
	}
	kept := per("go_memstats_heap_idle_bytes") - per("go_memstats_heap_released_bytes")
	return why + fmt.Sprintf("; the rest of the resident growth is memory the Go runtime grew to while parking them (a collection is due only once "+
		"the heap doubles) and keeps: per parked request, before that collection, %.1f KiB of heap in use (the live heap and garbage not yet "+
		"collected) and %.1f KiB of idle heap not yet returned to the operating system",
		per("go_memstats_heap_inuse_bytes")/1024, kept/1024)
}

// evaluateAllow posts a policies/evaluate request the default policies allow and
// checks the answer.
func evaluateAllow(hc *http.Client, base, sid string) func() error {
	return func() error {
		code, body, err := postJSON(bgctx(), hc, base+"/v1/sessions/"+sid+"/policies/evaluate",
			map[string]any{"event": map[string]any{"type": "PHASE_TOOL_CALL", "target": "Read", "data": map[string]any{"name": "Read", "arguments": map[string]any{"file_path": "/tmp/x"}}}})
		if err == nil && (code != 200 || !strings.Contains(string(body), "POLICY_ACTION_ALLOW")) {
			err = fmt.Errorf("evaluate answered %d %s", code, body)
		}
		return err
	}
}

// verdictWorkers is how many connections decide the requests parked at once: on
// Postgres verdicts given at once share a commit's flush, so more of them at once
// decide the 10,000 sooner (32: 15 s; 128: 11–14 s on the machine the bench was
// written on), which keeps the bench near four minutes.
var verdictWorkers = 128
