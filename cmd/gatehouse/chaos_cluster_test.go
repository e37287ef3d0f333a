package main

// Pieces of TestChaos (chaos_test.go): the set of replicas that come and go, the HTTP
// traffic log every background request goes through, and a reconnecting SSE reader.
// Background goroutines never touch *testing.T: they record, and the test goroutine
// judges at the end.

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
)

// replicaSet is the chaos test's replicas: slot i holds the running process or nil
// while it is down. Clients pick a live one for every attempt.
type replicaSet struct {
	mu    sync.Mutex
	slots []*proc
	all   []*proc // every process ever started, for the stderr checks at the end
}

// live returns the URLs of the running replicas.
func (rs *replicaSet) live() []string {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	var out []string
	for _, p := range rs.slots {
		if p != nil {
			out = append(out, p.URL)
		}
	}
	return out
}

// pick returns a random live replica, preferring one other than avoid (the replica
// that just failed); "" when none is up.
func (rs *replicaSet) pick(rng *rand.Rand, avoid string) string {
	urls := rs.live()
	if len(urls) > 1 && avoid != "" {
		kept := urls[:0]
		for _, u := range urls {
			if u != avoid {
				kept = append(kept, u)
			}
		}
		urls = kept
	}
	if len(urls) == 0 {
		return ""
	}
	return urls[rng.IntN(len(urls))]
}

func (rs *replicaSet) set(i int, p *proc) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	rs.slots[i] = p
	if p != nil {
		rs.all = append(rs.all, p)
	}
}

func (rs *replicaSet) get(i int) *proc {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return rs.slots[i]
}

// pids returns the process ids of the running replicas by slot.
func (rs *replicaSet) pids() map[int]int {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	out := map[int]int{}
	for i, p := range rs.slots {
		if p != nil && !p.Exited() {
			out[i] = p.cmd.Process.Pid
		}
	}
	return out
}

// rssBytes reads a process's resident set size from /proc/<pid>/status (VmRSS).
func rssBytes(pid int) (int64, bool) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			f := strings.Fields(rest) // "123456 kB"
			if len(f) >= 1 {
				kb, err := strconv.ParseInt(f[0], 10, 64)
				return kb << 10, err == nil
			}
		}
	}
	return 0, false
}

// exchange is one finished (or failed) HTTP request of the run.
type exchange struct {
	sent, done time.Time
	who        string // user
	method     string
	base, path string
	status     int // 0 on a transport error
	body       string
	err        error
}

func (x exchange) String() string {
	res := fmt.Sprintf("%d %.200s", x.status, x.body)
	if x.err != nil {
		res = x.err.Error()
	}
	return fmt.Sprintf("%s %s%s as %s (sent %s, took %s): %s", x.method, x.base, x.path, x.who,
		x.sent.Format("15:04:05.000"), x.done.Sub(x.sent).Round(time.Millisecond), res)
}

// traffic sends the run's requests and keeps every 5xx answer for the end.
type traffic struct {
	hc *http.Client

	mu        sync.Mutex
	serverErr []exchange // every answer ≥ 500
	requests  int
}

func newTraffic() *traffic {
	tr := &http.Transport{MaxIdleConnsPerHost: 32, IdleConnTimeout: 30 * time.Second}
	return &traffic{hc: &http.Client{Transport: tr}}
}

// send posts (or gets) one request as user on base and records 5xx answers.
func (tf *traffic) send(ctx context.Context, base, user, method, path string, body any) (*testserver.Response, exchange) {
	c := &testserver.Client{Base: base, User: user, HC: tf.hc}
	x := exchange{sent: time.Now(), who: user, method: method, base: base, path: path}
	resp, err := c.Send(ctx, method, path, body)
	x.done, x.err = time.Now(), err
	if resp != nil {
		x.status, x.body = resp.Status, string(resp.Body)
	}
	tf.mu.Lock()
	tf.requests++
	if x.status >= 500 {
		tf.serverErr = append(tf.serverErr, x)
	}
	tf.mu.Unlock()
	return resp, x
}

// sseFrame is one frame of a session stream.
type sseFrame struct {
	event string
	seq   int64 // 0 when the frame had no id (heartbeats, pending replays)
	data  string
}

// readStream opens path on base as user, resuming after lastSeq (Last-Event-ID, sent
// even when 0 so that nothing published before the first connection is skipped), and
// delivers frames to f until the stream ends or ctx is done. It
// returns why the stream ended.
func readStream(ctx context.Context, hc *http.Client, base, user, path string, lastSeq int64, f func(sseFrame)) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+path, nil)
	if err != nil {
		return err
	}
	req.Header.Set("X-Forwarded-Email", user)
	req.Header.Set("Last-Event-ID", strconv.FormatInt(lastSeq, 10))
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		return fmt.Errorf("stream answered %d %s", resp.StatusCode, b)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64*1024), 4<<20)
	var fr sseFrame
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if fr.event != "" || fr.data != "" {
				f(fr)
			}
			fr = sseFrame{}
		case strings.HasPrefix(line, "event: "):
			fr.event = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "id: "):
			fr.seq, _ = strconv.ParseInt(strings.TrimPrefix(line, "id: "), 10, 64)
		case strings.HasPrefix(line, "data: "):
			if fr.data != "" {
				fr.data += "\n"
			}
			fr.data += strings.TrimPrefix(line, "data: ")
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	return io.EOF
}
