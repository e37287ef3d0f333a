package main

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/google/pprof/profile"
)

// The bench names each missed target with what the server spent it on, measured in
// the same run: Go's own profiles of the server (served on --pprof-addr) and its
// metrics. This file fetches and summarises them.

// freeAddr picks a loopback address with a free port for the server's profiles.
func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// pprofClient fetches profiles from a server's --pprof-addr.
type pprofClient struct {
	base string
	hc   *http.Client
}

func (p *pprofClient) fetch(path string) (*profile.Profile, error) {
	resp, err := p.hc.Get(p.base + path)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		return nil, fmt.Errorf("%s: %d %s", path, resp.StatusCode, b)
	}
	prof, err := profile.Parse(resp.Body)
	if err == nil {
		keepProfile(path, prof)
	}
	return prof, err
}

// profiles counts the profiles kept in $GATEHOUSE_BENCH_PROFILE_DIR.
var profiles atomic.Int64

// keepProfile writes prof into the folder $GATEHOUSE_BENCH_PROFILE_DIR names, when it
// is set, for `go tool pprof` to show what a `why` note only sums up.
func keepProfile(path string, prof *profile.Profile) {
	dir := os.Getenv("GATEHOUSE_BENCH_PROFILE_DIR")
	if dir == "" {
		return
	}
	kind, _, _ := strings.Cut(strings.TrimPrefix(path, "/debug/pprof/"), "?")
	f, err := os.Create(filepath.Join(dir, fmt.Sprintf("%02d-%s.pb.gz", profiles.Add(1), kind)))
	if err != nil {
		return
	}
	defer f.Close()
	_ = prof.Write(f)
}

// cpuDuring profiles the server's CPU for d (whole seconds, at least one) while run
// runs, and returns run's error and the profile.
func (p *pprofClient) cpuDuring(d time.Duration, run func() error) (*profile.Profile, error) {
	secs := max(1, int(math.Ceil(d.Seconds())))
	type got struct {
		prof *profile.Profile
		err  error
	}
	ch := make(chan got, 1)
	go func() {
		prof, err := p.fetch("/debug/pprof/profile?seconds=" + strconv.Itoa(secs))
		ch <- got{prof, err}
	}()
	runErr := run()
	g := <-ch
	if runErr != nil {
		return nil, runErr
	}
	return g.prof, g.err
}

// heap is the server's in-use heap right after a collection.
func (p *pprofClient) heap() (*profile.Profile, error) { return p.fetch("/debug/pprof/heap?gc=1") }

// cpuCategories sorts CPU samples into what a reader of the table can act on: a
// sample goes to the first category, in this order, that any frame of its stack
// matches — so SQLite's file writes count as SQLite, and a JSON log line as logging.
var cpuCategories = []struct{ name, match string }{
	{"garbage collection", "runtime.gcBgMarkWorker"},
	{"garbage collection", "runtime.gcAssistAlloc"},
	{"SQLite (statements, commits and their file writes)", "modernc.org/"},
	{"Postgres driver", "github.com/jackc/"},
	{"GORM", "gorm.io/"},
	{"logging", "log/slog."},
	{"JSON", "encoding/json."},
	{"network system calls", "syscall."},
	{"HTTP (net/http, Echo)", "net/http."},
	{"HTTP (net/http, Echo)", "github.com/labstack/echo"},
	{"Gatehouse", "github.com/gatehouse-dev/gatehouse/"},
}

// cpuShare is one category's share of a CPU profile.
type cpuShare struct {
	name string
	ns   int64
}

// cpuBreakdown sums a CPU profile's samples by category; total is every sample's time.
func cpuBreakdown(prof *profile.Profile) (shares []cpuShare, total int64) {
	idx := len(prof.SampleType) - 1 // cpu nanoseconds
	by := map[string]int64{}
	for _, s := range prof.Sample {
		v := s.Value[idx]
		total += v
		by[classify(s)] += v
	}
	for name, ns := range by {
		shares = append(shares, cpuShare{name, ns})
	}
	sort.Slice(shares, func(i, j int) bool { return shares[i].ns > shares[j].ns })
	return shares, total
}

func classify(s *profile.Sample) string {
	for _, c := range cpuCategories {
		for _, loc := range s.Location {
			for _, l := range loc.Line {
				if strings.HasPrefix(l.Function.Name, c.match) {
					return c.name
				}
			}
		}
	}
	return "Go runtime (scheduler, allocation)"
}

// fmtShares prints the n largest categories of a breakdown as percentages.
func fmtShares(shares []cpuShare, total int64, n int) string {
	var parts []string
	for i, s := range shares {
		if i == n || total == 0 {
			break
		}
		parts = append(parts, fmt.Sprintf("%s %.0f%%", s.name, 100*float64(s.ns)/float64(total)))
	}
	return strings.Join(parts, ", ")
}

// heapTop sums a heap profile's in-use bytes per unit (a parked request) in KiB and
// names the n functions that allocated the most of it.
func heapTop(prof *profile.Profile, units, n int) (kib float64, top string) {
	idx := -1
	for i, st := range prof.SampleType {
		if st.Type == "inuse_space" {
			idx = i
		}
	}
	if idx < 0 || units == 0 {
		return 0, ""
	}
	by := map[string]int64{}
	var total int64
	for _, s := range prof.Sample {
		total += s.Value[idx]
		if len(s.Location) > 0 && len(s.Location[0].Line) > 0 {
			by[s.Location[0].Line[0].Function.Name] += s.Value[idx]
		}
	}
	type fn struct {
		name  string
		bytes int64
	}
	var fns []fn
	for name, b := range by {
		fns = append(fns, fn{name, b})
	}
	sort.Slice(fns, func(i, j int) bool { return fns[i].bytes > fns[j].bytes })
	var parts []string
	for i := 0; i < n && i < len(fns); i++ {
		parts = append(parts, fmt.Sprintf("%s %.1f KiB", fns[i].name, float64(fns[i].bytes)/1024/float64(units)))
	}
	return float64(total) / 1024 / float64(units), strings.Join(parts, ", ")
}

// histogram is a Prometheus histogram as scraped: cumulative counts by upper bound.
type histogram struct {
	le    []float64
	count []float64
}

// scrapeHistogram reads the unlabelled histogram name from /metrics.
func scrapeHistogram(hc *http.Client, base, name string) (histogram, error) {
	resp, err := hc.Get(base + "/metrics")
	if err != nil {
		return histogram{}, err
	}
	defer resp.Body.Close()
	var h histogram
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	prefix := name + `_bucket{le="`
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, prefix) {
			continue
		}
		rest := line[len(prefix):]
		end := strings.Index(rest, `"}`)
		if end < 0 {
			continue
		}
		le, err1 := strconv.ParseFloat(rest[:end], 64)
		n, err2 := strconv.ParseFloat(strings.TrimSpace(rest[end+2:]), 64)
		if err1 != nil || err2 != nil {
			continue
		}
		h.le, h.count = append(h.le, le), append(h.count, n)
	}
	if len(h.le) == 0 {
		return h, fmt.Errorf("histogram %s not found", name)
	}
	return h, sc.Err()
}

// quantileSince estimates quantile q of the observations made between before and h,
// interpolating inside the bucket it falls in.
func (h histogram) quantileSince(before histogram, q float64) (time.Duration, bool) {
	if len(before.count) != len(h.count) {
		before = histogram{le: h.le, count: make([]float64, len(h.count))}
	}
	total := h.count[len(h.count)-1] - before.count[len(before.count)-1]
	if total <= 0 {
		return 0, false
	}
	rank := q * total
	prevLe, prevN := 0.0, 0.0
	for i := range h.le {
		n := h.count[i] - before.count[i]
		if n >= rank {
			if math.IsInf(h.le[i], 1) {
				return time.Duration(prevLe * float64(time.Second)), true
			}
			frac := 0.0
			if n > prevN {
				frac = (rank - prevN) / (n - prevN)
			}
			return time.Duration((prevLe + frac*(h.le[i]-prevLe)) * float64(time.Second)), true
		}
		prevLe, prevN = h.le[i], n
	}
	return 0, false
}

// commitHistogram is the server's metric of how long each verdict's commit took.
const commitHistogram = "gatehouse_verdict_commit_seconds"

// profiledResolves is how many park → resolve rounds run under the CPU profiler when
// the latency targets were missed (the table's figures come from unprofiled rounds).
const profiledResolves = 1000

// whyResolve explains a missed resolve → answer target: the commit's share, from the
// server's own histogram over the measured rounds, and where the server's CPU went
// during profiledResolves more rounds.
func whyResolve(before, after histogram, pp *pprofClient, rounds func() error) string {
	var parts []string
	c50, ok50 := after.quantileSince(before, 0.50)
	c99, ok99 := after.quantileSince(before, 0.99)
	if ok50 && ok99 {
		parts = append(parts, fmt.Sprintf("server-side the verdict's commit alone (the durable write neither the floor nor the peer makes) took p50 %s, p99 %s (%s over the measured rounds)",
			fmtDur(c50), fmtDur(c99), commitHistogram))
	}
	start := time.Now()
	prof, err := pp.cpuDuring(3*time.Second, rounds)
	if err == nil {
		shares, total := cpuBreakdown(prof)
		parts = append(parts, fmt.Sprintf("a park and its verdict cost the server %s of CPU (pprof over %d more rounds in %s): %s",
			fmtDur(time.Duration(total/profiledResolves)), profiledResolves, time.Since(start).Round(time.Millisecond), fmtShares(shares, total, 6)))
	} else {
		parts = append(parts, "no CPU profile: "+err.Error())
	}
	return strings.Join(parts, "; ")
}

// whyThroughput explains evaluate falling behind healthz: the server's CPU per request
// for each (pprof over d of each at 16 connections) and where evaluate's went.
func whyThroughput(pp *pprofClient, d time.Duration, healthz, evaluate func() error) string {
	per := func(do func() error) (time.Duration, []cpuShare, int64, error) {
		var rate float64
		prof, err := pp.cpuDuring(d, func() error {
			var err error
			rate, err = throughput(16, d, do)
			return err
		})
		if err != nil || rate == 0 {
			return 0, nil, 0, err
		}
		shares, total := cpuBreakdown(prof)
		return time.Duration(float64(total) / (rate * d.Seconds())), shares, total, nil
	}
	hz, hzShares, hzTotal, err := per(healthz)
	if err != nil {
		return "no CPU profile: " + err.Error()
	}
	ev, evShares, evTotal, err := per(evaluate)
	if err != nil {
		return "no CPU profile: " + err.Error()
	}
	return fmt.Sprintf("each evaluate cost the server %s of CPU against %s for a healthz (pprof over %s of each at 16 connections); evaluate: %s; healthz: %s",
		fmtDur(ev), fmtDur(hz), d, fmtShares(evShares, evTotal, 6), fmtShares(hzShares, hzTotal, 4))
}

// whyFanout explains a fan-out p99 over target: a second round of the same fan-out,
// with the server's CPU profiled over the delivery (from the park until the last
// subscriber has it), by component, and the spread from the first subscriber served
// to the last.
func whyFanout(pp *pprofClient, base, sid string, subs int) string {
	var prof *profile.Profile
	got, lat, err := fanoutRound(base, sid, subs, func(publish func() error) error {
		var perr error
		prof, perr = pp.cpuDuring(time.Second, publish)
		return perr
	})
	if err != nil || got == 0 {
		return fmt.Sprintf("no profiled round (%d received): %v", got, err)
	}
	shares, total := cpuBreakdown(prof)
	return fmt.Sprintf("in a second, profiled round the first subscriber had the prompt after %s, the median after %s, the 99th percentile after %s: one park is written to %d open streams, one after another, on two cores shared with the %d reading clients; the server spent %s of CPU in the profile's second (%d samples at 100 Hz, so shares are rough): %s",
		fmtDur(slices.Min(lat)), fmtDur(percentile(lat, 50)), fmtDur(percentile(lat, 99)), subs, subs,
		fmtDur(time.Duration(total)), total/int64(10*time.Millisecond), fmtShares(shares, total, 6))
}
