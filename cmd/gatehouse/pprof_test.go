package main

import (
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
)

// TestPprofOnItsOwnAddress: --pprof-addr serves the runtime's profiles there and only
// there; the API address, open to every client, has none.
func TestPprofOnItsOwnAddress(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	p := startServe(t, "sqlite://"+filepath.Join(t.TempDir(), "g.db"), "--pprof-addr", addr)
	get := func(url string) (int, string) {
		resp, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get("http://" + addr + "/debug/pprof/goroutine?debug=1"); code != http.StatusOK || !strings.Contains(body, "goroutine profile") {
		t.Fatalf("pprof address: %d %.200s", code, body)
	}
	if code, body := get(p.URL + "/debug/pprof/goroutine?debug=1"); code == http.StatusOK && strings.Contains(body, "goroutine profile") {
		t.Fatal("the API address serves runtime profiles")
	}
}
