package main

import (
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// freeLoopbackAddr is a loopback address with a port nobody listens on now.
func freeLoopbackAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// TestMetricsOnItsOwnAddress: `gatehouse serve --metrics-addr` serves /metrics there
// and not on the API's address, and SIGTERM closes that listener with the server.
func TestMetricsOnItsOwnAddress(t *testing.T) {
	addr := freeLoopbackAddr(t)
	p := startServe(t, "sqlite://"+filepath.Join(t.TempDir(), "g.db"), "--metrics-addr", addr)
	get := func(url string) (int, string) {
		resp, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get("http://" + addr + "/metrics"); code != http.StatusOK || !strings.Contains(body, "gatehouse_elicitations_pending") {
		t.Fatalf("metrics address: %d %.200s", code, body)
	}
	if code, body := get(p.URL + "/metrics"); code != http.StatusNotFound || strings.Contains(body, "gatehouse_") {
		t.Fatalf("the API address answers /metrics: %d %.200s", code, body)
	}
	p.Terminate(t)
	if code := p.WaitExit(t, 15*time.Second); code != 0 {
		t.Fatalf("exit code after SIGTERM = %d", code)
	}
	if conn, err := net.DialTimeout("tcp", addr, 2*time.Second); err == nil {
		conn.Close()
		t.Fatal("the metrics address still accepts connections after the server stopped")
	}
}
