// Command gatehouse-bench measures Gatehouse against SPEC §9 and prints one table.
//
// It starts the gatehouse binary (on SQLite and on a fresh Postgres database) and its
// own reference park/resolve server as separate processes, drives them over loopback
// from this process, and prints every figure beside its baseline from the same run:
// GET /healthz on the same server, and the reference server's park/resolve floor.
//
//	gatehouse-bench [-gatehouse bin/gatehouse] [-databases sqlite,postgres] [-audit-rows 1000000] …
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
		fs.Parse(os.Args[2:])
		if err := runReference(*addr); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return
	}
	bin := flag.String("gatehouse", "bin/gatehouse", "gatehouse binary")
	dbs := flag.String("databases", "sqlite,postgres", "databases to run on")
	pgAdmin := flag.String("postgres-admin-url", "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable", "Postgres URL to create the bench database under")
	iters := flag.Int("iterations", 300, "resolve→answer samples")
	parked := flag.Int("parked", 10000, "requests parked at once")
	subs := flag.Int("subscribers", 2000, "stream subscribers on one session")
	dur := flag.Duration("duration", 3*time.Second, "length of each throughput run")
	exportRows := flag.Int("audit-rows", 1000000, "rows in the audit export measurement (0: skip it)")
	dispatchN := flag.Int("notify-prompts", 2000, "prompts in the notification dispatcher throughput measurement (0: skip it)")
	flag.Parse()

	self, _ := os.Executable()
	ref, err := startProc(self, []string{"reference"}, nil)
	if err != nil {
		fail(err)
	}
	defer ref.stop()
	hc := newHTTP(256)

	fmt.Printf("Gatehouse benchmark — %s, %d CPU, %s/%s, %s\n\n", time.Now().UTC().Format("2006-01-02"), runtime.NumCPU(), runtime.GOOS, runtime.GOARCH, cpuModel())
	refLat, err := referenceResolveLatency(hc, ref.URL, *iters)
	if err != nil {
		fail(fmt.Errorf("reference latency: %w", err))
	}
	refP50, refP99 := percentile(refLat, 50), percentile(refLat, 99)
	refCap, err := referenceCapacity(ref, ref.URL, *parked)
	if err != nil {
		fail(fmt.Errorf("reference capacity: %w", err))
	}

	t := &table{}
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
		runOne(t, db, *bin, url, hc, refP50, refP99, refCap, *iters, *parked, *subs, *dur)
		cleanup()
		if *dispatchN > 0 {
			// A database and server of their own: thousands of pending prompts would
			// upset the other measurements.
			if url, cleanup, err = freshDB(db, *pgAdmin); err != nil {
				t.note(db, "dispatcher throughput: "+err.Error())
			} else {
				runDispatcher(t, db, *bin, url, *dispatchN)
				cleanup()
			}
		}
		if *exportRows > 0 {
			// A database of its own and a fresh server, so the peak RSS is the export's.
			if url, cleanup, err = freshDB(db, *pgAdmin); err != nil {
				t.note(db, "audit export: "+err.Error())
			} else {
				runAuditExport(t, db, *bin, url, *exportRows)
				cleanup()
			}
		}
		fmt.Fprintf(os.Stderr, "%s done\n", db)
	}
	t.print(os.Stdout)
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

func runOne(t *table, db, bin, url string, hc0 interface{}, refP50, refP99 time.Duration, refCap capacityResult, iters, parked, subs int, dur time.Duration) {
	// --notify-allow-private lets the notifications-on latency run post to the bench's
	// loopback receiver; nothing is notified until a person configures a channel. The
	// fan-out measurement holds thousands of streams as one person, far past the
	// per-person cap meant for people.
	srv, err := startProc(bin, []string{"serve", "--addr", "127.0.0.1:0", "--database-url", url, "--log-format", "json", "--notify-allow-private",
		"--max-streams-per-user", strconv.Itoa(max(subs+64, 32))},
		[]string{"GATEHOUSE_SESSION_SECRET=" + strings.Repeat("b", 32)})
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
	t.row(db, "healthz round trip p50 (baseline)", fmtDur(percentile(hz, 50)), "—", "—", "—")

	lat, park, err := gatehouseResolveLatency(hc, srv.URL, sid, iters, nil)
	if err != nil {
		t.note(db, "resolve latency: "+err.Error())
	} else {
		p50, p99 := percentile(lat, 50), percentile(lat, 99)
		lim50, lim99 := 2.0, 3.0
		if db == "postgres" {
			lim50, lim99 = 5, 6
		}
		t.row(db, "resolve → hook answered p50", fmtDur(p50), "ref "+fmtDur(refP50), ratio(p50, refP50), fmt.Sprintf("≤ %.0f×", lim50))
		t.row(db, "resolve → hook answered p99", fmtDur(p99), "ref "+fmtDur(refP99), ratio(p99, refP99), fmt.Sprintf("≤ %.0f×", lim99))
		// Right after, on the same server and session: the same with notifications on.
		notifyLatency(t, db, hc, srv.URL, sid, iters, lat, park)
	}

	hzRate, err1 := throughput(16, dur, func() error { return getOK(bgctx(), hc, srv.URL+"/healthz") })
	evRate, err2 := throughput(16, dur, func() error {
		code, body, err := postJSON(bgctx(), hc, srv.URL+"/v1/sessions/"+sid+"/policies/evaluate",
			map[string]any{"event": map[string]any{"type": "PHASE_TOOL_CALL", "target": "Read", "data": map[string]any{"name": "Read", "arguments": map[string]any{"file_path": "/tmp/x"}}}})
		if err == nil && (code != 200 || !strings.Contains(string(body), "POLICY_ACTION_ALLOW")) {
			err = fmt.Errorf("evaluate answered %d %s", code, body)
		}
		return err
	})
	switch {
	case err1 != nil:
		t.note(db, "healthz throughput: "+err1.Error())
	case err2 != nil:
		t.note(db, "evaluate throughput: "+err2.Error())
	default:
		t.row(db, "policies/evaluate → ALLOW throughput", fmt.Sprintf("%.0f/s", evRate), fmt.Sprintf("healthz %.0f/s", hzRate), fmt.Sprintf("%.2f×", evRate/hzRate), "≥ 0.5×")
	}

	got, p99, err := fanout(srv.URL, sid, subs)
	if err != nil {
		t.note(db, "fan-out: "+err.Error())
	} else {
		t.row(db, fmt.Sprintf("fan-out to %d subscribers: received", subs), fmt.Sprintf("%d/%d", got, subs), "—", "—", "all")
		t.row(db, "fan-out p99 (prompt parked → subscriber has it)", fmtDur(p99), "—", "—", "≤ 250ms")
	}

	capRes, err := gatehouseCapacity(srv, srv.URL, sid, parked)
	if err != nil {
		t.note(db, "capacity: "+err.Error())
	} else {
		t.row(db, "parked at once, answered correctly", fmt.Sprintf("%d/%d", capRes.Correct, capRes.Parked), fmt.Sprintf("ref %d/%d", refCap.Correct, refCap.Parked), "—", "all")
		t.row(db, "server memory per parked request", fmt.Sprintf("%.1f KiB", capRes.KiBPerParked), fmt.Sprintf("ref %.1f KiB", refCap.KiBPerParked), fmt.Sprintf("%.1f×", capRes.KiBPerParked/refCap.KiBPerParked), "≤ 40 KiB")
	}
}
