// Command gatehouse-bench measures Gatehouse against SPEC §9 and prints one table.
//
// It starts the gatehouse binary (on SQLite and on a fresh Postgres database) and its
// own reference park/resolve server as separate processes, drives them over loopback
// from this process, and prints every figure beside its baselines from the same run:
// GET /healthz on the same server, the reference server's park/resolve floor, and the
// peer (the seed system's FastAPI + asyncio architecture, ../shared/bench/peer-fastapi,
// run when Debian's python3-fastapi and python3-uvicorn are installed).
//
//	gatehouse-bench [-gatehouse bin/gatehouse] [-databases sqlite,postgres] [-peer-dir DIR] [-audit-rows 200000] …
//	gatehouse-bench reference -addr 127.0.0.1:0   (the reference server itself)
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "reference" {
		fs := flag.NewFlagSet("reference", flag.ExitOnError)
		addr := fs.String("addr", "127.0.0.1:0", "listen address")
		passTo := fs.String("pass-to", "", "serve a bare pass-through to this URL instead")
		fs.Parse(os.Args[2:])
		run := func() error { return runReference(*addr) }
		if *passTo != "" {
			run = func() error { return runPassThrough(*addr, *passTo) }
		}
		if err := run(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return
	}
	bin := flag.String("gatehouse", "bin/gatehouse", "gatehouse binary")
	dbs := flag.String("databases", "sqlite,postgres", "databases to run on")
	pgAdmin := flag.String("postgres-admin-url", "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable", "Postgres URL to create the bench database under")
	iters := flag.Int("iterations", 300, "resolve→answer samples on each server (the floor's and the peer's interleaved)")
	parked := flag.Int("parked", 10000, "requests parked at once, on each server (SPEC §9's 10,000)")
	subs := flag.Int("subscribers", 2000, "stream subscribers on one session")
	dur := flag.Duration("duration", 3*time.Second, "length of each throughput run")
	exportRows := flag.Int("audit-rows", 200000, "rows in the audit export measurement (0: skip it)")
	dispatchN := flag.Int("notify-prompts", 2000, "prompts in the notification dispatcher throughput measurement (0: skip it)")
	defPeerDir := "../shared/bench/peer-fastapi"
	if d := os.Getenv(peerDirEnv); d != "" {
		defPeerDir = d
	}
	peerDir := flag.String("peer-dir", defPeerDir, "folder of the peer app (FastAPI + asyncio futures), relative to the working directory; empty: no peer (default from $"+peerDirEnv+")")
	peerPython := flag.String("peer-python", "/usr/bin/python3", "python with Debian's python3-fastapi and python3-uvicorn, to run the peer")
	autoOnly := flag.Bool("auto-only", false, "measure only the auto-answered requests (rule-answered hook, policies/evaluate, MCP tools/call) and their baselines")
	replicasOnly := flag.Bool("replicas-only", false, "measure only three replicas on one Postgres database (verdict on one wakes a request parked on another, connections, NOTIFY throughput)")
	replicaRounds := flag.Int("replica-rounds", 1000, "park on C → verdict on A rounds across three replicas on Postgres (0: skip the replica rows)")
	replicaBurst := flag.Int("replica-burst", 300, "requests parked at once over the three replicas (and on one of them alone)")
	parkedOnly := flag.Bool("parked-only", false, "measure only the requests parked at once (count answered, memory per parked request) and their baselines")
	flag.Parse()
	if *autoOnly && *parkedOnly {
		fail(fmt.Errorf("-auto-only and -parked-only exclude each other"))
	}
	raiseFileLimit()
	replicaOpts := replicaOptions{Rounds: *replicaRounds, Same: *replicaRounds / 5, Burst: *replicaBurst}
	if *replicasOnly {
		header()
		fmt.Println()
		t := &table{noPeer: true}
		runReplicas(t, *bin, *pgAdmin, replicaOpts)
		t.print(os.Stdout)
		return
	}

	t := &table{}
	self, _ := os.Executable()
	ref, err := startProc(self, []string{"reference"}, nil)
	if err != nil {
		fail(err)
	}
	defer ref.stop()
	bases := []*baseline{floorBaseline(ref)}
	var peer *proc
	peerNote, peerVersions := "", ""
	switch {
	case *peerDir == "":
		peerNote = "not run (-peer-dir is empty)"
	default:
		if peerVersions, peerNote = peerMissing(*peerPython, *peerDir); peerNote != "" {
			peerNote = "not run: " + peerNote
		} else if peer, err = startPeer(*peerPython, *peerDir); err != nil {
			peerNote = "not run: " + err.Error()
		} else {
			bases = append(bases, peerBaseline(peer))
		}
	}
	if peerNote != "" {
		fmt.Fprintln(os.Stderr, "gatehouse-bench: peer "+peerNote+"; going on without the peer column")
	}

	header()
	if peer != nil {
		fmt.Printf("peer: %s, %s\n", *peerDir, peerVersions)
	}
	fmt.Println()
	figs := []baselineFigures{{}} // -auto-only: the floor's park figures are not needed
	if !*autoOnly {
		timed("floor and peer", "baselines", func() { figs = measureBaselines(bases, *iters, *parked, *dur) })
	}
	peerURL := ""
	if peer != nil && (*autoOnly || figs[1].Err == nil) {
		peerURL = peer.URL
	}
	var auto autoBaselines
	var autoErr error
	if !*parkedOnly {
		pass, err := startProc(self, []string{"reference", "-pass-to", ref.URL}, nil)
		if err != nil {
			fail(err)
		}
		auto, autoErr = measureAutoBaselines(ref.URL, pass.URL, peerURL, *iters, *dur)
		pass.stop()
	}
	if peer != nil {
		// Kept to the end: each auto-answered row measures it again beside Gatehouse.
		defer peer.stop()
	}
	if figs[0].Err != nil {
		fail(fmt.Errorf("reference floor: %w", figs[0].Err))
	}
	if autoErr != nil {
		fail(fmt.Errorf("auto-answered baselines: %w", autoErr))
	}
	cmp := &comparison{floor: &figs[0]}
	if len(figs) > 1 {
		if figs[1].Err != nil {
			peerNote = "measurement failed: " + figs[1].Err.Error()
		} else {
			cmp.peer = &figs[1]
		}
	}
	switch {
	case cmp.peer == nil && auto.PeerEvalCall == nil:
		t.noPeer = true
		t.note("peer", peerNote+" — no peer column")
	case cmp.peer == nil && !*autoOnly:
		t.note("peer", peerNote+" — only its policy evaluation is in the peer column")
	}
	t.note("baselines", fmt.Sprintf("the floor (this tool's reference server: net/http, a map of channels) and the peer (FastAPI + asyncio futures under uvicorn, one process) "+
		"are measured in the same run before Gatehouse: %d resolve samples each, interleaved (floor, peer, floor, …), then %d GET /healthz round trips each, interleaved, "+
		"healthz throughput (16 connections, %s) and %d parked at once (at most 256 connecting at a time; resident memory of the server process before and after, "+
		"per parked request). A sample is resolve sent → the parked request's whole answer read, taken once the server holds the park: the floor flushes "+
		"its headers then; the peer answers only when resolved, so it is taken as holding it once its kernel queues show the request read and a later "+
		"/healthz was answered (one asyncio loop runs handlers in order up to their await). Gatehouse's resolve rows are set beside the floor's and the peer's "+
		"resolve samples taken again while it is measured: after each of its %d samples, one of the floor's and one of the peer's, in turn.", *iters, *iters, *dur, *parked, *iters))
	if !*parkedOnly {
		t.note("auto-answered baselines", fmt.Sprintf("answered at once, with no person: the floor's /hook (a Claude Code PermissionRequest decided by an in-memory "+
			"allow rule), /evaluate and its runner endpoint (an MCP tools/call's floor is the runner called directly), and the peer's /evaluate (the seed's "+
			"in-memory policy answer: its equivalent of both the hook and the evaluation; it has no MCP proxy). Gatehouse is measured on a server and database "+
			"of its own whose runner is the floor's, and each of its rows measures the floor and the peer beside it: %d samples of each in turn (Gatehouse, "+
			"floor, peer, …, after %d untimed), then throughput at %d connections in %d alternating turns of %s each; its rule-answered hooks' turns last until "+
			"their decisions are stored (a read of the rule waits for them). Before them, the floor's runner and the same runner through a bare pass-through "+
			"(this tool's: net/http server and client, nothing else, a process of its own) are measured the same way (%d samples each, interleaved, then %s "+
			"of throughput each), for the MCP rows' why notes.", *iters, autoWarmup, autoConns, rateSlices, *dur/rateSlices, *iters, *dur))
	}

	for _, db := range strings.Split(*dbs, ",") {
		db = strings.TrimSpace(db)
		var url string
		var cleanup func()
		switch db {
		case "sqlite":
			dir, _ := os.MkdirTemp("", "gatehouse-bench-")
			url = "sqlite://" + filepath.Join(dir, "bench.db")
			cleanup = func() { os.RemoveAll(dir) }
		case "postgres":
			url, cleanup, err = freshPostgres(*pgAdmin)
			if err != nil {
				t.note(db, "skipped: "+err.Error())
				continue
			}
		default:
			fail(fmt.Errorf("unknown database %q", db))
		}
		if *parkedOnly {
			// The baselines' history before theirs, and nothing more (see capacity).
			capacity(t, db, *bin, url, cmp, *iters, *parked, *dur)
			cleanup()
			continue
		}
		if !*autoOnly {
			timed(db, "resolve, fan-out, parked", func() { runOne(t, db, *bin, url, cmp, bases, *iters, *parked, *subs, *dur) })
			cleanup()
			// A database and server of their own: thousands of decided prompts would
			// upset the other measurements.
			if url, cleanup, err = freshDB(db, *pgAdmin); err != nil {
				t.note(db, "auto-answered: "+err.Error())
				continue
			}
		}
		timed(db, "auto-answered", func() { runAutoAnswered(t, db, *bin, url, ref.URL, &auto, *iters, *dur) })
		cleanup()
		if *autoOnly {
			continue
		}
		if *dispatchN > 0 {
			// A database and server of their own: thousands of pending prompts would
			// upset the other measurements.
			if url, cleanup, err = freshDB(db, *pgAdmin); err != nil {
				t.note(db, "dispatcher throughput: "+err.Error())
			} else {
				timed(db, "dispatcher", func() { runDispatcher(t, db, *bin, url, *dispatchN) })
				cleanup()
			}
		}
		if *exportRows > 0 {
			// A database of its own and a fresh server, so the peak RSS is the export's.
			if url, cleanup, err = freshDB(db, *pgAdmin); err != nil {
				t.note(db, "audit export: "+err.Error())
			} else {
				timed(db, "audit export", func() { runAuditExport(t, db, *bin, url, *exportRows) })
				cleanup()
			}
		}
		fmt.Fprintf(os.Stderr, "%s done\n", db)
		if db == "postgres" && *replicaRounds > 0 {
			t0 := time.Now()
			runReplicas(t, *bin, *pgAdmin, replicaOpts)
			fmt.Fprintf(os.Stderr, "%s done in %s\n", replicasDB, time.Since(t0).Round(time.Second))
		}
	}
	t.print(os.Stdout)
}

// timed runs one part of the bench and says on stderr how long it took: where the
// bench's own minutes go.
func timed(db, part string, run func()) {
	t0 := time.Now()
	run()
	fmt.Fprintf(os.Stderr, "gatehouse-bench: %s: %s took %s\n", db, part, time.Since(t0).Round(time.Second))
}

// stopwatch returns a lap function that says on stderr how long the stage since the
// last lap (or the stopwatch's start) took.
func stopwatch(db string) (lap func(stage string)) {
	last := time.Now()
	return func(stage string) {
		fmt.Fprintf(os.Stderr, "gatehouse-bench: %s:   %s took %s\n", db, stage, time.Since(last).Round(100*time.Millisecond))
		last = time.Now()
	}
}

// header is the table's first line: the day and the machine.
func header() {
	fmt.Printf("Gatehouse benchmark — %s, %d CPU, %s/%s, %s\n", time.Now().UTC().Format("2006-01-02"), runtime.NumCPU(), runtime.GOOS, runtime.GOARCH, cpuModel())
}

// freshDB makes an empty database of the given kind.
func freshDB(db, pgAdmin string) (string, func(), error) {
	if db == "postgres" {
		return freshPostgres(pgAdmin)
	}
	dir, err := os.MkdirTemp("", "gatehouse-bench-")
	if err != nil {
		return "", nil, err
	}
	return "sqlite://" + filepath.Join(dir, "bench.db"), func() { os.RemoveAll(dir) }, nil
}

// comparison holds the baselines Gatehouse's figures are set beside; peer is nil when
// the peer did not run.
type comparison struct{ floor, peer *baselineFigures }

// durCells are the floor and peer cells for Gatehouse's figure g, when pick gives the
// baselines' counterpart.
func (c *comparison) durCells(g time.Duration, pick func(*baselineFigures) time.Duration) (floor, peer string) {
	cell := func(b *baselineFigures) string {
		if b == nil {
			return "—"
		}
		return fmtDur(pick(b)) + " (" + ratio(g, pick(b)) + ")"
	}
	return cell(c.floor), cell(c.peer)
}

func resolveP(p float64) func(*baselineFigures) time.Duration {
	return func(b *baselineFigures) time.Duration { return percentile(b.Resolve, p) }
}

// resolveTargets are SPEC §9's resolve → answered targets against the floor.
func resolveTargets(db string) (p50, p99 float64) {
	if db == "postgres" {
		return 3, 5
	}
	return 2, 3
}

// runOne measures Gatehouse on db's url: resolve → answer (bases, the floor and the
// peer, sampled again beside it), notifications on, throughput, fan-out, capacity.
func runOne(t *table, db, bin, url string, cmp *comparison, bases []*baseline, iters, parked, subs int, dur time.Duration) {
	srv, pp, err := startGatehouse(bin, url, subs)
	if err != nil {
		t.note(db, "server did not start: "+err.Error())
		return
	}
	defer srv.stop()
	hc := newHTTP(256)
	sid, err := newSession(hc, srv.URL)
	if err != nil {
		t.note(db, "session: "+err.Error())
		return
	}
	hz, err := healthzLatency(hc, srv.URL, iters)
	if err != nil {
		t.note(db, "healthz: "+err.Error())
		return
	}
	hz50 := percentile(hz, 50)
	f, p := cmp.durCells(hz50, func(b *baselineFigures) time.Duration { return percentile(b.Healthz, 50) })
	t.vs(db, "healthz round trip p50 (baseline)", fmtDur(hz50), f, p, "—", "—")

	lap := stopwatch(db)
	commitBefore, _ := scrapeHistogram(hc, srv.MetricsURL, commitHistogram)
	beside := newBesideResolve(cmp, bases)
	defer beside.close()
	lat, park, err := gatehouseResolveLatency(hc, srv.URL, sid, iters, &latencyHooks{AfterAnswer: beside.sample})
	if err != nil {
		t.note(db, "resolve latency: "+err.Error())
	} else {
		cmp := beside.comparison(cmp)
		p50, p99 := percentile(lat, 50), percentile(lat, 99)
		f50, f99 := percentile(cmp.floor.Resolve, 50), percentile(cmp.floor.Resolve, 99)
		lim50, lim99 := resolveTargets(db)
		met50, met99 := float64(p50) <= lim50*float64(f50), float64(p99) <= lim99*float64(f99)
		f, p := cmp.durCells(p50, resolveP(50))
		t.vs(db, "resolve → hook answered p50", fmtDur(p50), f, p, "—",
			verdict(fmt.Sprintf("≤ %g× floor", lim50), met50))
		f, p = cmp.durCells(p99, resolveP(99))
		t.vs(db, "resolve → hook answered p99", fmtDur(p99), f, p, "—",
			verdict(fmt.Sprintf("≤ %g× floor", lim99), met99))
		ahead := true
		if cmp.peer != nil {
			q50, q99 := percentile(cmp.peer.Resolve, 50), percentile(cmp.peer.Resolve, 99)
			ahead = p50 < q50 && p99 < q99
			t.vs(db, "resolve → hook answered: ahead of the peer", fmt.Sprintf("p50 %s, p99 %s", fmtDur(p50), fmtDur(p99)), "—",
				fmt.Sprintf("p50 %s, p99 %s", fmtDur(q50), fmtDur(q99)), "—", verdict("faster at p50 and p99", ahead))
		} else {
			t.vs(db, "resolve → hook answered: ahead of the peer", fmt.Sprintf("p50 %s, p99 %s", fmtDur(p50), fmtDur(p99)), "—", "—", "—",
				"faster at p50 and p99: not measured (no peer)")
		}
		if !met50 || !met99 || !ahead {
			commitAfter, _ := scrapeHistogram(hc, srv.MetricsURL, commitHistogram)
			t.note(db, "why resolve → hook answered missed: "+whyResolve(commitBefore, commitAfter, pp, func() error {
				_, _, err := gatehouseResolveLatency(hc, srv.URL, sid, profiledResolves, nil)
				return err
			}))
		}
		// Right after, on the same server and session: the same with notifications on.
		lap("resolve → answer")
		notifyLatency(t, db, hc, srv.URL, sid, iters, lat, park, cmp)
		lap("notifications on and off")
	}

	hzRate, err1 := throughput(16, dur, func() error { return getOK(bgctx(), hc, srv.URL+"/healthz") })
	evRate, err2 := throughput(16, dur, evaluateAllow(hc, srv.URL, sid))
	rateCell := func(b *baselineFigures) string {
		if b == nil {
			return "—"
		}
		return fmt.Sprintf("%.0f/s (%.2f×)", b.HzRate, hzRate/b.HzRate)
	}
	switch {
	case err1 != nil:
		t.note(db, "healthz throughput: "+err1.Error())
	case err2 != nil:
		t.note(db, "evaluate throughput: "+err2.Error())
	default:
		t.vs(db, "healthz throughput (baseline)", fmt.Sprintf("%.0f/s", hzRate), rateCell(cmp.floor), rateCell(cmp.peer), "—", "—")
		t.row(db, "policies/evaluate → ALLOW throughput", fmt.Sprintf("%.0f/s", evRate), fmt.Sprintf("healthz %.0f/s", hzRate), fmt.Sprintf("%.2f×", evRate/hzRate),
			verdict("≥ 1× healthz", evRate >= hzRate))
		if evRate < hzRate {
			t.note(db, "why policies/evaluate missed: "+whyThroughput(pp, 2*time.Second,
				func() error { return getOK(bgctx(), hc, srv.URL+"/healthz") }, evaluateAllow(hc, srv.URL, sid)))
		}
	}

	lap("healthz and evaluate throughput")
	got, p99, err := fanout(srv.URL, sid, subs)
	if err != nil {
		t.note(db, "fan-out: "+err.Error())
	} else {
		t.row(db, fmt.Sprintf("fan-out to %d subscribers: received", subs), fmt.Sprintf("%d/%d", got, subs), "—", "—", verdict("all", got == subs))
		t.row(db, "fan-out p99 (prompt parked → subscriber has it)", fmtDur(p99), "—", "—", verdict("≤ 50ms", got == subs && p99 <= 50*time.Millisecond))
		if got == subs && p99 > 50*time.Millisecond {
			t.note(db, "why fan-out p99 missed: "+whyFanout(pp, srv.URL, sid, subs))
		}
	}

	// Memory on a server of its own, after the history the floor and the peer had
	// before theirs (resolve rounds, a healthz throughput run) and nothing more: the
	// fan-out's 2,000 streams leave heap free that parked requests would reuse,
	// flattering the resident figure, and their teardown would still be running.
	lap("fan-out")
	srv.stop()
	capacity(t, db, bin, url, cmp, iters, parked, dur)
	lap("parked at once")
}

// startGatehouse starts a Gatehouse server on url for the bench, with its runtime
// profiles on a port of their own. --notify-allow-private lets the notifications-on
// latency run post to the bench's loopback receiver; nothing is notified until a
// person configures a channel. The fan-out measurement holds thousands of streams as
// one person, far past the per-person cap meant for people. --pprof-addr: when a
// target is missed, the bench profiles the server to say what the time or memory
// went to. extra is more flags (the auto-answered run's --runner-url). --metrics-addr: the bench reads the server's gauges and histograms there
// (srv.MetricsURL); the API's address serves no /metrics.
func startGatehouse(bin, url string, subs int, extra ...string) (*proc, *pprofClient, error) {
	pprofAddr, err := freeAddr()
	if err != nil {
		return nil, nil, err
	}
	metricsAddr, err := freeAddr()
	if err != nil {
		return nil, nil, err
	}
	srv, err := startProc(bin, append([]string{"serve", "--addr", "127.0.0.1:0", "--database-url", url, "--log-format", "json", "--notify-allow-private",
		"--max-streams-per-user", strconv.Itoa(max(subs+64, 32)), "--pprof-addr", pprofAddr, "--metrics-addr", metricsAddr}, extra...),
		[]string{"GATEHOUSE_SESSION_SECRET=" + strings.Repeat("b", 32)})
	if err != nil {
		return nil, nil, err
	}
	srv.MetricsURL = "http://" + metricsAddr
	return srv, &pprofClient{base: "http://" + pprofAddr, hc: newHTTP(4)}, nil
}

// maxKiBPerParked is SPEC §9's bound on server memory per parked request: the peer's.
const maxKiBPerParked = 16

// capacity parks many requests at once on a fresh server whose history matches the
// baselines' (resolve rounds, healthz throughput) and reports memory per parked request.
func capacity(t *table, db, bin, url string, cmp *comparison, iters, parked int, dur time.Duration) {
	// All of them are one person's: past --max-parked-per-person the rest would be
	// refused (429) and never park. Without the heap floor: it lets the idle server's
	// heap grow to 64 MiB before the requests park, which would count part of their
	// memory as the idle server's (at 10,000 parked the heap is past the floor anyway).
	srv, pp, err := startGatehouse(bin, url, 0, "--max-parked-per-person", strconv.Itoa(parked+64), "--gc-min-heap-mib", "0")
	if err != nil {
		t.note(db, "capacity: server did not start: "+err.Error())
		return
	}
	defer srv.stop()
	hc := newHTTP(256)
	sid, err := newSession(hc, srv.URL)
	if err == nil {
		_, _, err = gatehouseResolveLatency(hc, srv.URL, sid, iters, nil)
	}
	if err == nil {
		_, err = throughput(16, dur, func() error { return getOK(bgctx(), hc, srv.URL+"/healthz") })
	}
	if err != nil {
		t.note(db, "capacity warm-up: "+err.Error())
		return
	}
	capRes, err := gatehouseCapacity(db, srv, pp, srv.URL, sid, parked)
	if err != nil {
		t.note(db, "capacity: "+err.Error())
	} else {
		countCell := func(b *baselineFigures) string {
			if b == nil {
				return "—"
			}
			return fmt.Sprintf("%d/%d", b.Capacity.Correct, b.Capacity.Parked)
		}
		memCell := func(b *baselineFigures) string {
			if b == nil {
				return "—"
			}
			return fmt.Sprintf("%.1f KiB (%.2f×)", b.Capacity.KiBPerParked, capRes.KiBPerParked/b.Capacity.KiBPerParked)
		}
		t.vs(db, "parked at once, answered correctly", fmt.Sprintf("%d/%d (parked in %.1fs)", capRes.Correct, capRes.Parked, capRes.ParkedIn.Seconds()),
			countCell(cmp.floor), countCell(cmp.peer), "—", verdict("all", capRes.Correct == capRes.Parked))
		if capRes.Correct != capRes.Parked {
			t.note(db, "why parked at once missed: the wrong answers were "+capRes.wrongNote())
		}
		t.vs(db, "server memory per parked request", fmt.Sprintf("%.1f KiB", capRes.KiBPerParked), memCell(cmp.floor), memCell(cmp.peer), "—",
			verdict("≤ 16 KiB", capRes.KiBPerParked <= maxKiBPerParked))
		if capRes.KiBPerParked > maxKiBPerParked {
			t.note(db, "why memory per parked request missed: "+capRes.Why)
		}
	}
}
