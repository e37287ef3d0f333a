package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// The peer (SPEC §9): the seed system's architecture reduced to its floor — FastAPI +
// asyncio futures, in memory, no database — kept outside this repository, in
// ../shared/bench/peer-fastapi/ of this workplace. It is run under Debian's
// python3-fastapi and python3-uvicorn when they are installed; when anything it needs
// is missing the bench says what and goes on without it.
//
//	POST /park/{id}     blocks until /resolve/{id}, then answers the hook's allow
//	POST /resolve/{id}  202
//	GET  /healthz

// peerDirEnv overrides the default of -peer-dir.
const peerDirEnv = "GATEHOUSE_BENCH_PEER_DIR"

const peerInstall = "apt-get install -y python3-fastapi python3-uvicorn"

// peerMissing says why the peer cannot run, or "" when python, fastapi, uvicorn and the
// app are all there; versions then names them.
func peerMissing(python, dir string) (versions, missing string) {
	if _, err := os.Stat(filepath.Join(dir, "app.py")); err != nil {
		return "", fmt.Sprintf("%s not found (the peer app; pass -peer-dir or set %s to the folder holding it — ../shared/bench/peer-fastapi from the repository root in this workplace)",
			filepath.Join(dir, "app.py"), peerDirEnv)
	}
	if _, err := exec.LookPath(python); err != nil {
		return "", fmt.Sprintf("%s not found (install: apt-get install -y python3 python3-fastapi python3-uvicorn, or pass -peer-python)", python)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, python, "-c",
		"import sys, fastapi, uvicorn; print('Python %d.%d.%d, FastAPI %s, uvicorn %s' % (sys.version_info[:3] + (fastapi.__version__, uvicorn.__version__)))").CombinedOutput()
	if err != nil {
		msg := strings.TrimSpace(string(out))
		if i := strings.LastIndex(msg, "\n"); i >= 0 {
			msg = msg[i+1:]
		}
		if msg == "" {
			msg = err.Error()
		}
		return "", fmt.Sprintf("%s cannot import fastapi and uvicorn (%s; install: %s)", python, msg, peerInstall)
	}
	return strings.TrimSpace(string(out)), ""
}

// startPeer runs the peer app under uvicorn on a free loopback port and waits, with a
// deadline, until its /healthz answers.
func startPeer(python, dir string) (*proc, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	var lastErr error
	// A free port is found by listening on :0 and closing; another process may take it
	// before uvicorn binds, so a bind failure is retried on a new port.
	for attempt := 0; attempt < 3; attempt++ {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		port := ln.Addr().(*net.TCPAddr).Port
		ln.Close()
		cmd := exec.Command(python, "-m", "uvicorn", "--app-dir", abs, "app:app",
			"--host", "127.0.0.1", "--port", strconv.Itoa(port), "--log-level", "warning")
		cmd.Env = os.Environ()
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			return nil, err
		}
		exited := make(chan struct{})
		go func() { cmd.Wait(); close(exited) }()
		p := &proc{cmd: cmd, URL: fmt.Sprintf("http://127.0.0.1:%d", port), exited: exited}
		if lastErr = waitHealthy(p, 30*time.Second); lastErr == nil {
			return p, nil
		}
		p.stop()
		lastErr = fmt.Errorf("%w: %s", lastErr, strings.TrimSpace(lastLines(out.String(), 3)))
	}
	return nil, lastErr
}

// waitHealthy polls GET /healthz until it answers 200, the process exits, or the
// deadline passes.
func waitHealthy(p *proc, within time.Duration) error {
	hc := &http.Client{Timeout: 2 * time.Second}
	defer hc.CloseIdleConnections()
	deadline := time.Now().Add(within)
	for {
		select {
		case <-p.exited:
			return errors.New("the peer exited before it answered /healthz")
		default:
		}
		if getOK(context.Background(), hc, p.URL+"/healthz") == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the peer did not answer /healthz within %s", within)
		}
		select { // pacing a readiness poll, bounded by the deadline above
		case <-p.exited:
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " / ")
}

// tcpQueues is one loopback connection's queues as /proc/net/tcp shows them.
type tcpQueues struct{ tx, rx int64 }

// loopbackConns reads the established IPv4 connections between 127.0.0.1:port (the
// server's side) and the bench: client port → the server side's queues and the client
// side's queues.
func loopbackConns(port int) (server, client map[int]tcpQueues, err error) {
	f, err := os.Open("/proc/net/tcp")
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	server, client = map[int]tcpQueues{}, map[int]tcpQueues{}
	sc := bufio.NewScanner(f)
	sc.Scan() // header
	for sc.Scan() {
		// sl local_address rem_address st tx_queue:rx_queue …
		fs := strings.Fields(sc.Text())
		if len(fs) < 5 || fs[3] != "01" { // ESTABLISHED
			continue
		}
		lp, lok := hexPort(fs[1])
		rp, rok := hexPort(fs[2])
		tx, rx, qok := hexQueues(fs[4])
		if !lok || !rok || !qok {
			continue
		}
		switch {
		case lp == port:
			server[rp] = tcpQueues{tx, rx}
		case rp == port:
			client[lp] = tcpQueues{tx, rx}
		}
	}
	return server, client, sc.Err()
}

// hexPort reads a loopback "0100007F:1F90" address's port.
func hexPort(addr string) (int, bool) {
	host, port, ok := strings.Cut(addr, ":")
	if !ok || host != "0100007F" {
		return 0, false
	}
	p, err := strconv.ParseInt(port, 16, 32)
	return int(p), err == nil
}

func hexQueues(s string) (tx, rx int64, ok bool) {
	a, b, ok := strings.Cut(s, ":")
	if !ok {
		return 0, 0, false
	}
	tx, err1 := strconv.ParseInt(a, 16, 64)
	rx, err2 := strconv.ParseInt(b, 16, 64)
	return tx, rx, err1 == nil && err2 == nil
}

// waitRequestsRead waits until every park request sent from the given client ports
// (already written by the bench) was acknowledged by the server's kernel and read by
// the server (nothing left in either queue), then until a /healthz sent afterwards is
// answered. The peer answers a park only once it is resolved, so nothing on the wire
// says "parked"; but it serves everything on one asyncio event loop, which runs each
// read request's handler, in the order read, up to its first real wait — the park's
// await on its future — before it gets to a request read later: once the server has
// read every park and then answered a later /healthz, every park is waiting on its
// future.
func waitRequestsRead(hc *http.Client, base string, port int, clientPorts []int, within time.Duration) error {
	deadline := time.Now().Add(within)
	for {
		server, client, err := loopbackConns(port)
		if err != nil {
			return err
		}
		pending := 0
		for _, cp := range clientPorts {
			s, ok1 := server[cp]
			c, ok2 := client[cp]
			if !ok1 || !ok2 || s.rx != 0 || c.tx != 0 {
				pending++
			}
		}
		if pending == 0 {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d of %d park requests not read by the peer after %s", pending, len(clientPorts), within)
		}
		if len(clientPorts) > 1 {
			time.Sleep(20 * time.Millisecond) // pacing a poll of /proc/net/tcp, bounded by the deadline above
		}
	}
	return getOK(context.Background(), hc, base+"/healthz")
}

// raiseFileLimit lifts this process's open-file limit to its hard limit. Calling
// Setrlimit also makes the processes it starts (the peer) inherit the raised limit —
// Go otherwise gives them back the original soft limit, often 1024, too few for
// thousands of parked connections.
func raiseFileLimit() {
	var l syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l) == nil {
		l.Cur = l.Max
		syscall.Setrlimit(syscall.RLIMIT_NOFILE, &l)
	}
}

func portOf(rawURL string) int {
	i := strings.LastIndex(rawURL, ":")
	p, _ := strconv.Atoi(strings.TrimRight(rawURL[i+1:], "/"))
	return p
}
