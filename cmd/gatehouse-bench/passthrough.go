package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"time"
)

// runPassThrough serves a pass-through that does nothing else: each request is sent on
// to the same path at to, over kept-alive connections, and its answer copied back —
// net/http's server and client, no parsing, no logging. It is what one more HTTP hop
// costs on this machine before a proxy does anything: beside the MCP pass-through rows,
// whose floor (the runner called directly) has no hop at all.
func runPassThrough(addr, to string) error {
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 2 * autoConns, IdleConnTimeout: time.Minute}}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stdout, "Pass-through running at http://%s\n", ln.Addr())
	return http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req, err := http.NewRequestWithContext(r.Context(), r.Method, to+r.URL.RequestURI(), r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		req.ContentLength = r.ContentLength
		req.Header.Set("Content-Type", r.Header.Get("Content-Type"))
		resp, err := hc.Do(req)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		w.Header().Set("Content-Type", resp.Header.Get("Content-Type"))
		w.WriteHeader(resp.StatusCode)
		io.Copy(w, resp.Body)
	}))
}
