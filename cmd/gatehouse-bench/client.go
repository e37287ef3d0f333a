package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"sort"
	"strings"
	"time"
)

// newHTTP returns a client whose pool allows many concurrent connections.
func newHTTP(maxConns int) *http.Client {
	tr := &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        maxConns,
		MaxIdleConnsPerHost: maxConns,
		IdleConnTimeout:     90 * time.Second,
	}
	return &http.Client{Transport: tr}
}

// newAbortingHTTP is newHTTP whose connections end with a reset when closed, leaving no
// TIME_WAIT entry behind. The thousands of connections a parked-at-once run opens would
// otherwise stay listed in /proc/net/tcp for a minute, and the peer's resolve samples,
// taken later beside Gatehouse's, read that list to see a park held: a list ten
// thousand lines long made each sample take tens of milliseconds.
func newAbortingHTTP(maxConns int) *http.Client {
	hc := newHTTP(maxConns)
	d := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
	hc.Transport.(*http.Transport).DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := d.DialContext(ctx, network, addr)
		if tc, ok := c.(*net.TCPConn); ok {
			_ = tc.SetLinger(0)
		}
		return c, err
	}
	return hc
}

func postJSON(ctx context.Context, hc *http.Client, url string, body any) (int, []byte, error) {
	raw, _ := json.Marshal(body)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(raw))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

func getJSON(hc *http.Client, url string) (int, []byte, error) {
	resp, err := hc.Get(url)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

func getOK(ctx context.Context, hc *http.Client, url string) error {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %d", url, resp.StatusCode)
	}
	return nil
}

func idOf(b []byte) (string, error) {
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return "", err
	}
	id, _ := m["id"].(string)
	if id == "" {
		return "", fmt.Errorf("no id in %s", b)
	}
	return id, nil
}

// newSession creates an agent and a session on a Gatehouse server.
func newSession(hc *http.Client, base string) (string, error) {
	ctx := context.Background()
	_, b, err := postJSON(ctx, hc, base+"/v1/agents", map[string]any{"name": "bench"})
	if err != nil {
		return "", err
	}
	agent, err := idOf(b)
	if err != nil {
		return "", err
	}
	_, b, err = postJSON(ctx, hc, base+"/v1/sessions", map[string]any{"agent_id": agent})
	if err != nil {
		return "", err
	}
	return idOf(b)
}

// sse is a minimal event-stream reader.
type sse struct {
	resp *http.Response
	sc   *bufio.Scanner
}

func openSSE(ctx context.Context, hc *http.Client, url string) (*sse, error) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		return nil, fmt.Errorf("stream: %d", resp.StatusCode)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 16*1024), 1<<20)
	return &sse{resp: resp, sc: sc}, nil
}

// next returns the next event's type and data.
func (s *sse) next() (string, string, error) {
	var typ, data string
	for s.sc.Scan() {
		line := s.sc.Text()
		switch {
		case line == "" && typ != "":
			return typ, data, nil
		case strings.HasPrefix(line, "event: "):
			typ = line[len("event: "):]
		case strings.HasPrefix(line, "data: "):
			data = line[len("data: "):]
		}
	}
	if err := s.sc.Err(); err != nil {
		return "", "", err
	}
	return "", "", io.EOF
}

// waitFor reads until an event of typ arrives.
func (s *sse) waitFor(typ string) (string, error) {
	for {
		t, d, err := s.next()
		if err != nil {
			return "", err
		}
		if t == typ {
			return d, nil
		}
	}
}

func (s *sse) close() { s.resp.Body.Close() }

// percentile returns the p-th percentile (0..100) of ds.
func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	idx := int(p / 100 * float64(len(s)-1))
	return s[idx]
}
