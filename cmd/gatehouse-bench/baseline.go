package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// baseline is a park/resolve server Gatehouse's figures are set beside: the floor (the
// bench's own reference server) or the peer (FastAPI + asyncio futures). Both are
// measured the same way, interleaved sample by sample.
type baseline struct {
	name    string
	p       *proc
	park    func(id string) string // path of the request that waits
	resolve func(id string) string // path of the request that wakes it
	want    string                 // in every correct answer
	// flushes: the server sends the park's headers once it is parked (the floor). The
	// peer answers only when resolved; it is known parked once it has read the request
	// (waitRequestsRead).
	flushes bool
}

func floorBaseline(p *proc) *baseline {
	return &baseline{name: "floor", p: p, flushes: true, want: `"action":"accept"`,
		park:    func(id string) string { return "/park?id=" + id },
		resolve: func(id string) string { return "/resolve?id=" + id + "&action=accept" }}
}

func peerBaseline(p *proc) *baseline {
	return &baseline{name: "peer", p: p, want: `"behavior":"allow"`,
		park:    func(id string) string { return "/park/" + id },
		resolve: func(id string) string { return "/resolve/" + id }}
}

// baselineFigures is what the bench measured on one baseline server.
type baselineFigures struct {
	Resolve  []time.Duration // resolve sent → parked request answered
	Healthz  []time.Duration // GET /healthz round trips
	HzRate   float64         // GET /healthz per second from 16 connections
	Capacity capacityResult
	Err      error // the first measurement that failed, if any
}

// measureBaselines measures every baseline: resolve latency and healthz round trips
// interleaved (one sample of each server in turn, n each), then healthz throughput and
// capacity (parked at once) one server after the other.
func measureBaselines(bs []*baseline, n, parked int, dur time.Duration) []baselineFigures {
	out := make([]baselineFigures, len(bs))
	hcs := make([]*http.Client, len(bs))
	agents := make([]*http.Client, len(bs)) // parks come from a client of their own (see gatehouseResolveLatency)
	for i := range bs {
		hcs[i] = newHTTP(256)
		agents[i] = newHTTP(4)
	}
	for k := 0; k < n; k++ {
		for i, b := range bs {
			if out[i].Err != nil {
				continue
			}
			d, err := b.resolveSample(hcs[i], agents[i])
			if err != nil {
				out[i].Err = fmt.Errorf("resolve latency: %w", err)
				continue
			}
			out[i].Resolve = append(out[i].Resolve, d)
		}
	}
	for k := 0; k < n; k++ {
		for i, b := range bs {
			if out[i].Err != nil {
				continue
			}
			t0 := time.Now()
			if err := getOK(context.Background(), hcs[i], b.p.URL+"/healthz"); err != nil {
				out[i].Err = fmt.Errorf("healthz: %w", err)
				continue
			}
			out[i].Healthz = append(out[i].Healthz, time.Since(t0))
		}
	}
	for i, b := range bs {
		if out[i].Err != nil {
			continue
		}
		rate, err := throughput(16, dur, func() error { return getOK(context.Background(), hcs[i], b.p.URL+"/healthz") })
		if err != nil {
			out[i].Err = fmt.Errorf("healthz throughput: %w", err)
			continue
		}
		out[i].HzRate = rate
		hcs[i].CloseIdleConnections()
	}
	for i, b := range bs {
		if out[i].Err != nil {
			continue
		}
		c, err := b.capacity(parked)
		if err != nil {
			out[i].Err = fmt.Errorf("capacity: %w", err)
			continue
		}
		out[i].Capacity = c
	}
	return out
}

// parkRequest is one park request in flight.
type parkRequest struct {
	port     atomic.Int32  // the bench's side of its connection
	wrote    chan struct{} // closed once the request is written
	headers  chan error    // the response's headers came (or the request failed)
	answered chan answer   // the whole answer came
	once     sync.Once
}

type answer struct {
	at  time.Time
	err error
}

// startPark sends b's park request for id from hc.
func (b *baseline) startPark(hc *http.Client, id string) *parkRequest {
	pr := &parkRequest{wrote: make(chan struct{}), headers: make(chan error, 1), answered: make(chan answer, 1)}
	wrote := func() { pr.once.Do(func() { close(pr.wrote) }) }
	trace := &httptrace.ClientTrace{
		GotConn: func(i httptrace.GotConnInfo) {
			if a, ok := i.Conn.LocalAddr().(*net.TCPAddr); ok {
				pr.port.Store(int32(a.Port))
			}
		},
		WroteRequest: func(httptrace.WroteRequestInfo) { wrote() },
	}
	req, _ := http.NewRequestWithContext(httptrace.WithClientTrace(context.Background(), trace), http.MethodPost, b.p.URL+b.park(id), nil)
	go func() {
		resp, err := hc.Do(req)
		if err != nil {
			wrote()
			pr.headers <- err
			pr.answered <- answer{err: err}
			return
		}
		pr.headers <- nil
		body, err := io.ReadAll(resp.Body)
		at := time.Now()
		resp.Body.Close()
		if err == nil && (resp.StatusCode != http.StatusOK || !strings.Contains(string(body), b.want)) {
			err = fmt.Errorf("park answered %d %s", resp.StatusCode, body)
		}
		pr.answered <- answer{at, err}
	}()
	return pr
}

// resolveSample parks one request (from agent), waits until the server holds it, then times
// resolve sent → parked request answered (as gatehouseResolveLatency times Gatehouse's
// hook: from just before the resolve is sent to when the parked request's whole
// answer has been read).
func (b *baseline) resolveSample(hc, agent *http.Client) (time.Duration, error) {
	id := benchID()
	pr := b.startPark(agent, id)
	if b.flushes {
		if err := <-pr.headers; err != nil {
			return 0, err
		}
	} else {
		<-pr.wrote
		if err := waitRequestsRead(hc, b.p.URL, portOf(b.p.URL), []int{int(pr.port.Load())}, 10*time.Second); err != nil {
			return 0, err
		}
	}
	t0 := time.Now()
	resp, err := hc.Post(b.p.URL+b.resolve(id), "", nil)
	if err != nil {
		return 0, err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		return 0, fmt.Errorf("resolve answered %d", resp.StatusCode)
	}
	a := <-pr.answered
	if a.err != nil {
		return 0, a.err
	}
	if a.at.Before(t0) {
		return 0, fmt.Errorf("%s answered a park before it was resolved", b.name)
	}
	return a.at.Sub(t0), nil
}

// capacity parks n requests at once (at most 256 connecting at a time), measures the
// server's resident memory per parked request, then resolves them all and checks
// every answer.
func (b *baseline) capacity(n int) (capacityResult, error) {
	hc := newAbortingHTTP(n + 64)
	// Thousands of kept-alive connections would eat the file descriptors the next run
	// needs.
	defer hc.CloseIdleConnections()
	before, err := b.p.rssKiB()
	if err != nil {
		return capacityResult{}, err
	}
	ids := make([]string, n)
	prs := make([]*parkRequest, n)
	sem := make(chan struct{}, 256)
	for i := range ids {
		ids[i] = benchID()
		sem <- struct{}{}
		prs[i] = b.startPark(hc, ids[i])
		go func(pr *parkRequest) {
			if b.flushes {
				err := <-pr.headers // parked
				pr.headers <- err   // for the check below
			} else {
				<-pr.wrote
			}
			<-sem
		}(prs[i])
	}
	deadline := time.Now().Add(2 * time.Minute)
	ports := make([]int, 0, n)
	for i, pr := range prs {
		select {
		case <-pr.wrote:
		case <-time.After(time.Until(deadline)):
			return capacityResult{}, fmt.Errorf("park %d of %d not sent within 2 minutes", i+1, n)
		}
		if b.flushes {
			if err := <-pr.headers; err != nil {
				return capacityResult{}, fmt.Errorf("park %d: %w", i+1, err)
			}
		} else {
			ports = append(ports, int(pr.port.Load()))
		}
	}
	if !b.flushes {
		if err := waitRequestsRead(hc, b.p.URL, portOf(b.p.URL), ports, time.Until(deadline)); err != nil {
			return capacityResult{}, err
		}
	}
	after, err := b.p.rssKiB()
	if err != nil {
		return capacityResult{}, err
	}
	res := capacityResult{Parked: n, KiBPerParked: float64(after-before) / float64(n)}
	var rw sync.WaitGroup
	work := make(chan int)
	for w := 0; w < 32; w++ {
		rw.Add(1)
		go func() {
			defer rw.Done()
			for i := range work {
				if resp, err := hc.Post(b.p.URL+b.resolve(ids[i]), "", nil); err == nil {
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
			}
		}()
	}
	for i := range ids {
		work <- i
	}
	close(work)
	rw.Wait()
	deadline = time.Now().Add(2 * time.Minute)
	for _, pr := range prs {
		select {
		case a := <-pr.answered:
			if a.err == nil {
				res.Correct++
			}
		case <-time.After(time.Until(deadline)):
			return res, fmt.Errorf("not every parked request answered within 2 minutes of its verdict")
		}
	}
	return res, nil
}
