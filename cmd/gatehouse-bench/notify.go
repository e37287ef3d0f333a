package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// noiseBound is the largest notifications-on/off ratio of the park and resolve p50s
// still counted as "unchanged (within noise)". On the 2-CPU machine this
// was written on, the off measurement repeated a few seconds later on the same server
// moved by 0.71–1.42× at p50 across runs (p99 far more), so a tighter bound would
// flag noise, and even this one is not always above it; each run prints its own
// off/off spread so a reader can tell a miss from a noisy machine.
const noiseBound = 1.25 // see the note notifyLatency prints

// notifyLatency repeats the resolve-latency measurement with the person's webhook
// pointed at the bench's receiver, so every park and decision also produces a
// delivery, then once more with notifications off again. off and offPark are the
// notifications-off samples of the existing row, taken just before on this server;
// the on figures are compared with both off runs pooled, which bracket them, so a
// server that warms up or slows down over the run does not pass for a notification
// effect, and the two off runs' difference is printed as the noise seen.
//
// cmp's floor and peer are set beside the resolve figures.
func notifyLatency(t *table, db string, hc *http.Client, base, sid string, n int, off, offPark []time.Duration, cmp *comparison) {
	rc, err := startReceiver()
	if err != nil {
		t.note(db, "notifications on: receiver: "+err.Error())
		return
	}
	defer rc.close()
	if err := putWebhook(hc, base, rc.URL); err != nil {
		t.note(db, "notifications on: "+err.Error())
		return
	}
	// The person is told before they answer: resolve only once the prompt's
	// elicitation.created delivery arrived, so each decision also has an announcement
	// to follow up (a prompt decided before it was announced is never announced).
	// Back to back: the verdict comes as soon as the announcement arrived, and the next
	// park as soon as the hook answered, so the dispatcher's recording of one delivery
	// and sending of the next overlap the measured park and resolve — the most its
	// background work can get in their way.
	waitCreated := func(eid string) error {
		return rc.waitUntil(10*time.Second, "elicitation.created for "+eid, func(recvState) bool { return rc.hasCreated(eid) })
	}
	on, onPark, err := gatehouseResolveLatency(hc, base, sid, n, &latencyHooks{BeforeResolve: waitCreated})
	if err != nil {
		t.note(db, "resolve latency, notifications on: "+err.Error())
		return
	}
	// Every decision's elicitation.resolved follows; wait for all n before going on,
	// so the next run starts without leftover deliveries.
	delivered := rc.waitUntil(30*time.Second, "elicitation.resolved deliveries", func(s recvState) bool { return s.Resolved >= n })
	rc.mu.Lock()
	got := fmt.Sprintf("%d created, %d resolved", len(rc.created), len(rc.resolved))
	rc.mu.Unlock()
	if delivered != nil {
		got += " (" + delivered.Error() + ")"
	}
	// Settled: the verdict comes once the announcement is recorded as delivered, and
	// the next park once the follow-up is, as when a person takes a while to answer —
	// the cost notifications add to the park and resolve paths themselves.
	// A tenth of the samples: on Postgres a follow-up was seen to take up to ~1s to be
	// recorded, and the run must stay within the bench's time budget.
	sn := max(n/10, 10)
	settled, settledPark, err := gatehouseResolveLatency(hc, base, sid, sn, &latencyHooks{
		BeforeResolve: func(eid string) error { return waitDelivered(hc, base, sid, eid, 1) },
		AfterAnswer:   func(eid string) error { return waitDelivered(hc, base, sid, eid, 2) },
	})
	if err != nil {
		t.note(db, "resolve latency, notifications on, settled: "+err.Error())
		return
	}
	if err := putWebhook(hc, base, ""); err != nil {
		t.note(db, "notifications off again: "+err.Error())
		return
	}
	again, againPark, err := gatehouseResolveLatency(hc, base, sid, n, nil)
	if err != nil {
		t.note(db, "resolve latency, off repeat: "+err.Error())
		return
	}
	offAll, offAllPark := append(append([]time.Duration(nil), off...), again...), append(append([]time.Duration(nil), offPark...), againPark...)
	verdict := func(r float64) string {
		if r <= noiseBound {
			return fmt.Sprintf("≤ %.2f×: met", noiseBound)
		}
		return fmt.Sprintf("≤ %.2f×: MISSED", noiseBound)
	}
	fr := func(a, b time.Duration) float64 { return float64(a) / float64(b) }
	on50, off50 := percentile(on, 50), percentile(offAll, 50)
	on99, off99 := percentile(on, 99), percentile(offAll, 99)
	p50, poff50 := percentile(onPark, 50), percentile(offAllPark, 50)
	vs := func(measure string, g, base time.Duration, p float64, target string) {
		f, q := cmp.durCells(g, resolveP(p))
		t.vs(db, measure, fmtDur(g), f, q, "off "+fmtDur(base)+" ("+ratio(g, base)+")", target)
	}
	vs("resolve → hook answered p50, notifications on", on50, off50, 50, verdict(fr(on50, off50)))
	vs("resolve → hook answered p99, notifications on", on99, off99, 99, "—")
	t.row(db, "park → prompt on stream p50, notifications on", fmtDur(p50), "off "+fmtDur(poff50), ratio(p50, poff50), verdict(fr(p50, poff50)))
	s50, s99, sp50 := percentile(settled, 50), percentile(settled, 99), percentile(settledPark, 50)
	vs(fmt.Sprintf("resolve → hook answered p50, notif. on, settled (n=%d)", sn), s50, off50, 50, verdict(fr(s50, off50)))
	vs(fmt.Sprintf("resolve → hook answered p99, notif. on, settled (n=%d)", sn), s99, off99, 99, "—")
	t.row(db, fmt.Sprintf("park → prompt on stream p50, notif. on, settled (n=%d)", sn), fmtDur(sp50), "off "+fmtDur(poff50), ratio(sp50, poff50), verdict(fr(sp50, poff50)))
	t.row(db, fmt.Sprintf("deliveries during the on run (%d prompts)", n), got, "—", "—", "one of each")
	a50, ap50 := percentile(again, 50), percentile(againPark, 50)
	f50, fp50 := percentile(off, 50), percentile(offPark, 50)
	t.note(db, fmt.Sprintf("notifications on/off: %d samples each, on the same server and session, in this order: off (the rows above), "+
		"on back to back (verdict as soon as the announcement arrived, next park as soon as the hook answered: the dispatcher's "+
		"recording and sending overlap the measured paths), on settled (%d samples; verdict once the announcement is recorded delivered, "+
		"next park once the follow-up is), off again. \"off\" is both off runs pooled. The second off run measured resolve p50 %s "+
		"(%.2f× the first) and park p50 %s (%.2f×): this run's noise. \"Within noise\" is taken as a p50 ratio ≤ %.2f×, because "+
		"repeated off runs on the 2-CPU machine this was written on moved by 0.71–1.42× at p50 (p99 far more); "+
		"a miss with an off/off spread as large as the ratio is the machine, not notifications.",
		n, sn, fmtDur(a50), fr(a50, f50), fmtDur(ap50), fr(ap50, fp50), noiseBound))
}

// waitDelivered waits until the prompt has want deliveries recorded as delivered, by
// the status API (nothing announces it). It polls with a millisecond's pause so the
// polling does not take the CPU the dispatcher needs.
func waitDelivered(hc *http.Client, base, sid, eid string, want int) error {
	deadline := time.Now().Add(10 * time.Second)
	for {
		code, body, err := getJSON(hc, base+"/v1/sessions/"+sid+"/elicitations/"+eid+"/notifications")
		if err != nil {
			return err
		}
		var out struct {
			Notifications []struct {
				State string `json:"state"`
			} `json:"notifications"`
		}
		if code != http.StatusOK || json.Unmarshal(body, &out) != nil {
			return fmt.Errorf("deliveries of %s: %d %s", eid, code, body)
		}
		got := 0
		for _, d := range out.Notifications {
			if d.State == "delivered" {
				got++
			}
		}
		if got >= want {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: %d of %d deliveries recorded after 10s", eid, got, want)
		}
		time.Sleep(time.Millisecond) // pacing a poll of the status API, not standing in for a wait
	}
}

// waitPlanned waits until the prompt has rows delivery rows (planned: a created one;
// once decided, its resolved follow-up too), by the status API, polled every 10ms
// (nothing announces planning).
func waitPlanned(hc *http.Client, base, sid, eid string, rows int) error {
	deadline := time.Now().Add(60 * time.Second)
	for {
		code, body, err := getJSON(hc, base+"/v1/sessions/"+sid+"/elicitations/"+eid+"/notifications")
		if err != nil {
			return err
		}
		if code != http.StatusOK {
			return fmt.Errorf("deliveries of %s: %d %s", eid, code, body)
		}
		if strings.Count(string(body), `"kind"`) >= rows {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s not planned after 60s", eid)
		}
		time.Sleep(10 * time.Millisecond) // pacing a poll of the status API, not standing in for a wait
	}
}

// dispatchResult is one dispatcher throughput run.
type dispatchResult struct {
	Prompts    int
	CreateRate float64 // prompts parked per second (context: not the dispatcher)
	Created    drain
	Resolved   drain
}

// drain is how one backlog of deliveries drained after the receiver let go.
type drain struct {
	Held      int           // deliveries the receiver was holding at the release
	Delivered int           // first-time deliveries answered after the release
	Took      time.Duration // release → last of them answered
}

func (d drain) rate() float64 { return float64(d.Delivered) / d.Took.Seconds() }

// dispatcherThroughput measures how many deliveries per second the dispatcher gets
// out once it has a backlog. On its own server and database (n pending prompts would
// upset the other measurements), with the person's webhook at the bench's receiver:
//
//  1. The receiver holds every request unanswered. The dispatcher's few batch slots
//     fill with held sends, so it can plan but not send: n prompts, parked through
//     the non-blocking mcp_elicitation control event (no connection held per prompt),
//     pile up as a backlog.
//  2. Once all n are parked and planned (the last one has its delivery row) and the
//     receiver holds at least one send, it releases them and answers 204 from then
//     on. The rate is the first-time elicitation.created deliveries answered after
//     the release divided by the time from the release to the last of them — the
//     dispatcher claiming, signing, sending and recording a backlog, with no retry
//     backoff or polling interval in it. (Planning is done as prompts arrive, before
//     the release, and is not timed.)
//  3. The same again for the decisions: hold, resolve all n, wait until the last
//     follow-up is planned, release, time the elicitation.resolved backlog (a
//     follow-up also reads its announcement).
//
// --notify-send-timeout is raised so held sends do not time out (and retry) while the
// backlog builds.
func dispatcherThroughput(bin, url string, n int) (dispatchResult, error) {
	res := dispatchResult{Prompts: n}
	srv, err := startProc(bin, []string{"serve", "--addr", "127.0.0.1:0", "--database-url", url, "--log-format", "json",
		"--notify-allow-private", "--notify-send-timeout", "5m"},
		[]string{"GATEHOUSE_SESSION_SECRET=" + strings.Repeat("b", 32)})
	if err != nil {
		return res, err
	}
	defer srv.stop()
	rc, err := startReceiver()
	if err != nil {
		return res, err
	}
	defer rc.close()
	hc := newHTTP(64)
	defer hc.CloseIdleConnections()
	sid, err := newSession(hc, srv.URL)
	if err != nil {
		return res, err
	}
	if err := putWebhook(hc, srv.URL, rc.URL); err != nil {
		return res, err
	}
	rc.hold()
	t0 := time.Now()
	eids, err := parkMany(hc, srv.URL, sid, n)
	if err != nil {
		return res, err
	}
	res.CreateRate = float64(n) / time.Since(t0).Seconds()
	// The backlog is of deliveries: wait until the last prompt is planned (the
	// dispatcher plans oldest first), so what is timed is claiming, signing, sending
	// and recording.
	if err := waitPlanned(hc, srv.URL, sid, eids[len(eids)-1], 1); err != nil {
		return res, err
	}
	if res.Created, err = drainBacklog(rc, n, "elicitation.created"); err != nil {
		return res, fmt.Errorf("created: %w", err)
	}
	rc.hold()
	if err := forEach(hc, eids, func(eid string) error {
		code, body, err := postJSON(bgctx(), hc, srv.URL+"/v1/sessions/"+sid+"/elicitations/"+eid+"/resolve", map[string]any{"action": "accept"})
		if err == nil && (code != http.StatusAccepted || !strings.Contains(string(body), `"resolved"`)) {
			err = fmt.Errorf("resolve answered %d %s", code, body)
		}
		return err
	}); err != nil {
		return res, err
	}
	if err := waitPlanned(hc, srv.URL, sid, eids[len(eids)-1], 2); err != nil {
		return res, err
	}
	if res.Resolved, err = drainBacklog(rc, n, "elicitation.resolved"); err != nil {
		return res, fmt.Errorf("resolved: %w", err)
	}
	return res, nil
}

// drainBacklog waits until the receiver holds a send (the dispatcher's slots are
// taken and everything else waits behind them), releases, and times until n
// deliveries of typ were answered.
func drainBacklog(rc *receiver, n int, typ string) (drain, error) {
	var d drain
	if err := rc.waitUntil(30*time.Second, "a held "+typ, func(s recvState) bool { return s.Held > 0 }); err != nil {
		return d, err
	}
	released := rc.release()
	count := func(s recvState) int { return s.Created }
	if typ == "elicitation.resolved" {
		count = func(s recvState) int { return s.Resolved }
	}
	if err := rc.waitUntil(60*time.Second, "the "+typ+" backlog drained", func(s recvState) bool { return count(s) >= n }); err != nil {
		return d, err
	}
	d.Delivered, d.Held = rc.since(typ, released)
	rc.mu.Lock()
	d.Took = rc.last.Sub(released)
	rc.mu.Unlock()
	return d, nil
}

// parkMany parks n prompts through the mcp_elicitation control event, which inserts
// and publishes a prompt and answers at once, from 16 connections.
func parkMany(hc *http.Client, base, sid string, n int) ([]string, error) {
	eids := make([]string, n)
	idx := make([]string, n)
	for i := range idx {
		idx[i] = fmt.Sprint(i)
	}
	var next atomic.Int64
	err := forEach(hc, idx, func(string) error {
		i := next.Add(1) - 1
		code, body, err := postJSON(bgctx(), hc, base+"/v1/sessions/"+sid+"/events",
			map[string]any{"type": "mcp_elicitation", "data": map[string]any{"message": fmt.Sprintf("bench prompt %d", i)}})
		if err != nil {
			return err
		}
		var out struct {
			ID string `json:"elicitation_id"`
		}
		if code != http.StatusAccepted || json.Unmarshal(body, &out) != nil || out.ID == "" {
			return fmt.Errorf("mcp_elicitation answered %d %s", code, body)
		}
		eids[i] = out.ID
		return nil
	})
	return eids, err
}

// forEach runs do for every item from 16 workers; the first error stops it.
func forEach(hc *http.Client, items []string, do func(string) error) error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	work := make(chan string)
	var firstErr error
	var once sync.Once
	var wg sync.WaitGroup
	for w := 0; w < 16; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for it := range work {
				if err := do(it); err != nil {
					once.Do(func() { firstErr = err; cancel() })
				}
			}
		}()
	}
feed:
	for _, it := range items {
		select {
		case work <- it:
		case <-ctx.Done():
			break feed
		}
	}
	close(work)
	wg.Wait()
	return firstErr
}

// runDispatcher adds the dispatcher throughput rows to the table.
func runDispatcher(t *table, db, bin, url string, n int) {
	r, err := dispatcherThroughput(bin, url, n)
	if err != nil {
		t.note(db, "dispatcher throughput: "+err.Error())
		return
	}
	verdict := func(rate float64) string {
		if rate >= 1000 {
			return "≥ 1000/s: met"
		}
		return "≥ 1000/s: MISSED"
	}
	t.row(db, fmt.Sprintf("%d prompts parked (mcp_elicitation), webhook on", n), fmt.Sprintf("%.0f/s", r.CreateRate), "—", "—", "—")
	for _, x := range []struct {
		name string
		d    drain
	}{{"elicitation.created", r.Created}, {"elicitation.resolved", r.Resolved}} {
		t.row(db, "dispatcher throughput, "+x.name+" backlog", fmt.Sprintf("%.0f deliveries/s", x.d.rate()),
			fmt.Sprintf("%d in %.2fs", x.d.Delivered, x.d.Took.Seconds()), "—", verdict(x.d.rate()))
	}
	t.note(db, fmt.Sprintf("dispatcher throughput: on a server and database of its own, the receiver held every request while %d prompts were parked "+
		"(and again while they were decided), so deliveries piled up behind the dispatcher's few held sends; once the last one was planned "+
		"it released them and answered 204 at once. The rate is first-time deliveries answered after the release over release → last answered: "+
		"the dispatcher claiming, signing, sending and recording a backlog, no retry backoff or poll interval in it "+
		"(%d and %d sends were held at the releases and are not counted). The parking rate beside it is context, not the dispatcher.", n, r.Created.Held, r.Resolved.Held))
}
