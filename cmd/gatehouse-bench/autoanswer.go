package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"time"
)

// Auto-answered requests are answered at once, with no person: a Claude Code
// PermissionRequest hook an allow rule answers (its decision recorded first), a
// policies/evaluate that ALLOWs, and an MCP tools/call no policy asks about, passed
// through to the runner. SPEC §9 holds each to the floor's cost of the same answer:
// the reference server's /hook, /evaluate and runner endpoints (an MCP call's floor is
// the runner called directly), and sets it beside the peer's /evaluate — the seed's
// in-memory policy answer, its equivalent of both the hook and the evaluation (it has
// no MCP proxy).

// autoConns is how many connections the auto-answered throughput runs use.
const autoConns = 32

// autoWarmup requests go to each server untimed before its latency samples: they open
// the connection, as every sample after them finds it open.
const autoWarmup = 20

// autoFigures is one kind of auto-answered request measured on one server.
type autoFigures struct {
	Lat  []time.Duration // one connection, one request after the other
	Rate float64         // answered per second from autoConns connections
}

// autoBaselines are the floor's and the peer's auto-answered requests (PeerEvalCall
// nil: no peer), which each Gatehouse row measures beside Gatehouse (measureAuto), and
// the figures of the floor's runner called directly and through the bare
// pass-through (runPassThrough: one HTTP hop that does nothing else), which an MCP
// row's why note sets beside Gatehouse's.
type autoBaselines struct {
	FloorRunner, PassRunner                                     autoFigures
	FloorHookCall, FloorEvalCall, FloorRunnerCall, PeerEvalCall call
}

// call sends one auto-answered request on hc and checks its answer.
type call func(hc *http.Client) error

// postCheck is a call posting body (JSON) to url with the given headers; the answer
// must be a 200 containing want.
func postCheck(url string, body any, hdr map[string]string, want string) call {
	raw, _ := json.Marshal(body)
	return func(hc *http.Client) error {
		req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(raw))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/json")
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := hc.Do(req)
		if err != nil {
			return err
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err == nil && (resp.StatusCode != http.StatusOK || !strings.Contains(string(b), want)) {
			err = fmt.Errorf("POST %s answered %d %.300s", url, resp.StatusCode, b)
		}
		return err
	}
}

// evaluateBody is a policy evaluation no policy asks about (Gatehouse's default
// policies and the peer's ask only for Bash).
func evaluateBody() map[string]any {
	return map[string]any{"event": map[string]any{"type": "PHASE_TOOL_CALL", "target": "Read",
		"data": map[string]any{"name": "Read", "arguments": map[string]any{"file_path": "/tmp/x"}}}}
}

// runnerCall is the runner protocol's tools/call of the reference runner's tool, as
// the MCP proxy sends it.
func runnerCall() map[string]any {
	return map[string]any{"method": "tools/call", "params": map[string]any{"name": benchTool, "arguments": map[string]any{"text": "hi"}}}
}

// latencies warms c up, then times n calls one after the other on hc.
func latencies(hc *http.Client, c call, n int) ([]time.Duration, error) {
	for i := 0; i < autoWarmup; i++ {
		if err := c(hc); err != nil {
			return nil, err
		}
	}
	out := make([]time.Duration, 0, n)
	for i := 0; i < n; i++ {
		t0 := time.Now()
		if err := c(hc); err != nil {
			return nil, err
		}
		out = append(out, time.Since(t0))
	}
	return out, nil
}

// rateOf is c's throughput from autoConns connections over d.
func rateOf(c call, d time.Duration) (float64, error) {
	hc := newHTTP(2 * autoConns)
	defer hc.CloseIdleConnections()
	return throughput(autoConns, d, func() error { return c(hc) })
}

// measureAutoBaselines checks that the floor's three auto-answered requests and the
// peer's evaluate (peerURL "": none) are answered, and measures the floor's runner
// directly and through the bare pass-through at passURL: latency samples interleaved
// (one of each in turn, n each), then each one's throughput. The rest are measured
// beside Gatehouse, row by row.
func measureAutoBaselines(floorURL, passURL, peerURL string, n int, d time.Duration) (autoBaselines, error) {
	ab := autoBaselines{
		FloorHookCall:   postCheck(floorURL+"/hook", hookBody(""), nil, `"behavior":"allow"`),
		FloorEvalCall:   postCheck(floorURL+"/evaluate", evaluateBody(), nil, "POLICY_ACTION_ALLOW"),
		FloorRunnerCall: postCheck(floorURL+"/v1/sessions/bench/mcp/execute", runnerCall(), nil, `"ran `+benchTool+`"`),
	}
	checks := []call{ab.FloorHookCall, ab.FloorEvalCall}
	if peerURL != "" {
		ab.PeerEvalCall = postCheck(peerURL+"/evaluate", evaluateBody(), nil, "POLICY_ACTION_ALLOW")
		checks = append(checks, ab.PeerEvalCall)
	}
	hc := newHTTP(4)
	defer hc.CloseIdleConnections()
	for _, c := range checks {
		if err := c(hc); err != nil {
			return ab, err
		}
	}
	type kind struct {
		c   call
		out *autoFigures
	}
	kinds := []kind{
		{ab.FloorRunnerCall, &ab.FloorRunner},
		{postCheck(passURL+"/v1/sessions/bench/mcp/execute", runnerCall(), nil, `"ran `+benchTool+`"`), &ab.PassRunner},
	}
	hcs := make([]*http.Client, len(kinds))
	for i, k := range kinds {
		hcs[i] = newHTTP(4)
		if _, err := latencies(hcs[i], k.c, 0); err != nil {
			return ab, err
		}
	}
	for j := 0; j < n; j++ {
		for i, k := range kinds {
			t0 := time.Now()
			if err := k.c(hcs[i]); err != nil {
				return ab, err
			}
			k.out.Lat = append(k.out.Lat, time.Since(t0))
		}
	}
	for i, k := range kinds {
		hcs[i].CloseIdleConnections()
		rate, err := rateOf(k.c, d)
		if err != nil {
			return ab, err
		}
		k.out.Rate = rate
	}
	return ab, nil
}

// limit is a latency target set by the floor's figure: the most Gatehouse may take,
// and how the target reads.
type limit func(floor time.Duration) (time.Duration, string)

func timesFloor(k float64) limit {
	return func(f time.Duration) (time.Duration, string) {
		return time.Duration(k * float64(f)), fmt.Sprintf("≤ %g× floor", k)
	}
}

func overFloor(by time.Duration) limit {
	return func(f time.Duration) (time.Duration, string) { return f + by, "≤ floor + " + fmtDur(by) }
}

// autoKind is one auto-answered request as the table shows it.
type autoKind struct {
	name         string
	gatehouse    call
	floor        call // the floor's answer to the same request
	peer         call // the peer's (nil: no peer figure)
	peerHasIt    bool // the peer has an equivalent (it may still not have run)
	lim50, lim99 limit
	// settle, when set, returns once what the throughput run answered is stored (a
	// read that waits for it): the run counts as lasting until then, so answers whose
	// records are still being written do not count as done.
	settle func() error
	// why, when set, adds to a miss's note what else explains it, given Gatehouse's
	// figures (the rule-answered hook: its commit; the MCP pass-through: a bare one).
	why func(g autoFigures) string
}

// autoResult is what measuring one kind on Gatehouse showed.
type autoResult struct {
	figs             autoFigures
	missLat, missThr bool
}

// measureAuto measures k on Gatehouse and adds its rows: p50 and p99 at one connection,
// throughput at autoConns, each beside the floor and the peer with its target.
//
// The floor and the peer are measured again here, beside Gatehouse, rather than
// taken from the baselines measured minutes before: on a shared machine whatever
// else runs comes and goes, and a ratio of figures taken minutes apart measured that
// as much as Gatehouse. The latency samples are interleaved (Gatehouse, floor, peer,
// Gatehouse, …) and the throughput runs alternate in rateSlices slices each.
func measureAuto(t *table, db string, k autoKind, n int, d time.Duration) (autoResult, error) {
	var r autoResult
	sides := []call{k.gatehouse, k.floor}
	if k.peer != nil {
		sides = append(sides, k.peer)
	}
	lats, err := interleavedLatencies(sides, n)
	if err != nil {
		return r, err
	}
	rates, err := alternatingRates(sides, k.settle, d)
	if err != nil {
		return r, err
	}
	lat, rate := lats[0], rates[0]
	floor := autoFigures{Lat: lats[1], Rate: rates[1]}
	var peerFigs *autoFigures
	if k.peer != nil {
		peerFigs = &autoFigures{Lat: lats[2], Rate: rates[2]}
	}
	r.figs = autoFigures{Lat: lat, Rate: rate}
	for _, p := range []float64{50, 99} {
		g, f := percentile(lat, p), percentile(floor.Lat, p)
		lim := k.lim50
		if p == 99 {
			lim = k.lim99
		}
		most, label := lim(f)
		peer := "—"
		if peerFigs != nil {
			q := percentile(peerFigs.Lat, p)
			peer = fmtDur(q) + " (" + ratio(g, q) + ")"
		}
		t.vs(db, fmt.Sprintf("%s p%g (1 connection)", k.name, p), fmtDur(g), fmtDur(f)+" ("+ratio(g, f)+")", peer, "—", verdict(label, g <= most))
		r.missLat = r.missLat || g > most
	}
	met := rate >= 0.5*floor.Rate
	label := "≥ 0.5× floor"
	peer := "—"
	switch {
	case peerFigs != nil:
		peer = fmt.Sprintf("%.0f/s (%.2f×)", peerFigs.Rate, rate/peerFigs.Rate)
		label += ", ≥ 3× peer"
		met = met && rate >= 3*peerFigs.Rate
	case k.peerHasIt:
		label += " (no peer to compare)"
	default:
		label += " (the peer has no equivalent)"
	}
	t.vs(db, fmt.Sprintf("%s throughput (%d connections)", k.name, autoConns), fmt.Sprintf("%.0f/s", rate),
		fmt.Sprintf("%.0f/s (%.2f×)", floor.Rate, rate/floor.Rate), peer, "—", verdict(label, met))
	r.missThr = !met
	return r, nil
}

// rateSlices is how many turns each server takes in an alternating throughput run.
const rateSlices = 3

// interleavedLatencies times n requests on each of sides, one of each in turn, after
// autoWarmup untimed ones each; each side has a connection of its own.
func interleavedLatencies(sides []call, n int) ([][]time.Duration, error) {
	hcs := make([]*http.Client, len(sides))
	for i, c := range sides {
		hcs[i] = newHTTP(4)
		defer hcs[i].CloseIdleConnections()
		if _, err := latencies(hcs[i], c, 0); err != nil {
			return nil, err
		}
	}
	out := make([][]time.Duration, len(sides))
	for j := 0; j < n; j++ {
		for i, c := range sides {
			t0 := time.Now()
			if err := c(hcs[i]); err != nil {
				return nil, err
			}
			out[i] = append(out[i], time.Since(t0))
		}
	}
	return out, nil
}

// alternatingRates is each side's throughput from autoConns connections, d in all,
// run in rateSlices turns (first side, second, …, first again): what else the machine
// runs weighs on every side alike. settle (nil: none), run after each of the first
// side's turns, counts in that turn's time (the rule-answered hooks' storing).
func alternatingRates(sides []call, settle func() error, d time.Duration) ([]float64, error) {
	answered := make([]float64, len(sides))
	spent := make([]time.Duration, len(sides))
	hcs := make([]*http.Client, len(sides))
	for i := range sides {
		hcs[i] = newHTTP(2 * autoConns)
		defer hcs[i].CloseIdleConnections()
	}
	turn := d / rateSlices
	for range rateSlices {
		for i, c := range sides {
			start := time.Now()
			rate, err := throughput(autoConns, turn, func() error { return c(hcs[i]) })
			if err == nil && i == 0 && settle != nil {
				err = settle()
			}
			if err != nil {
				return nil, err
			}
			answered[i] += rate * turn.Seconds()
			spent[i] += time.Since(start)
		}
	}
	rates := make([]float64, len(sides))
	for i := range sides {
		rates[i] = answered[i] / spent[i].Seconds()
	}
	return rates, nil
}

// passNote sets Gatehouse's MCP pass-through figures (g) beside the bare pass-through's:
// how much of the gap to the floor one HTTP hop that does nothing already takes.
func passNote(ab *autoBaselines, g autoFigures) string {
	pass, floor := ab.PassRunner, ab.FloorRunner
	if len(pass.Lat) == 0 || pass.Rate == 0 {
		return ""
	}
	p50, f50 := percentile(pass.Lat, 50), percentile(floor.Lat, 50)
	gap := percentile(g.Lat, 50) - p50
	side := "over"
	if gap < 0 {
		gap, side = -gap, "under"
	}
	return fmt.Sprintf("a bare pass-through to the same runner (net/http server and client, nothing else) took p50 %s (floor + %s), p99 %s, "+
		"and answered %.0f/s (%.2f× the floor) in this run; Gatehouse's p50 was %s %s it, its throughput %.2f× it",
		fmtDur(p50), fmtDur(p50-f50), fmtDur(percentile(pass.Lat, 99)), pass.Rate, pass.Rate/floor.Rate,
		fmtDur(gap), side, g.Rate/pass.Rate)
}

// whyAuto explains a missed auto-answered target: the server's CPU per request and
// where it went, profiled at one connection (latency) and at autoConns (throughput),
// each over a run of its own.
func whyAuto(pp *pprofClient, k autoKind, r autoResult) string {
	var parts []string
	profiled := func(conns int, d time.Duration) string {
		var done atomic.Int64
		hc := newHTTP(2 * conns)
		defer hc.CloseIdleConnections()
		prof, err := pp.cpuDuring(d, func() error {
			_, err := throughput(conns, d, func() error {
				err := k.gatehouse(hc)
				if err == nil {
					done.Add(1)
				}
				return err
			})
			return err
		})
		if err != nil || done.Load() == 0 {
			return fmt.Sprintf("no CPU profile at %d connection(s): %v", conns, err)
		}
		shares, total := cpuBreakdown(prof)
		return fmt.Sprintf("at %d connection(s) each cost the server %s of CPU (pprof over %s, %d requests): %s",
			conns, fmtDur(time.Duration(total/done.Load())), d, done.Load(), fmtShares(shares, total, 6))
	}
	if r.missLat {
		parts = append(parts, profiled(1, 2*time.Second))
	}
	if r.missThr {
		parts = append(parts, profiled(autoConns, time.Second))
	}
	if k.why != nil {
		if w := k.why(r.figs); w != "" {
			parts = append(parts, w)
		}
	}
	return strings.Join(parts, "; ")
}
