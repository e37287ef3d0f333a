package main

import (
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"time"
)

// servePprof serves Go's runtime profiles on addr until the process exits: CPU, heap,
// goroutines, blocking, mutexes and execution traces of a live server, for operators
// and for `make bench`, which profiles the server to say what a missed target spent.
// It has its own mux and listener: profiles show internals (and a CPU profile costs
// the server while it runs), so they are never on the API's address.
func servePprof(addr string, log *slog.Logger) (net.Addr, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil {
			log.Error("pprof listener stopped", "err", err)
		}
	}()
	return ln.Addr(), nil
}
