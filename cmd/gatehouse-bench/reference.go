package main

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"sync"
)

// runReference serves the reference park/resolve server: plain net/http, a map of
// channels, no database. It is the floor for "a request waits, another request wakes
// it" that Gatehouse's figures are compared against.
//
//	POST /park?id=X     registers X, flushes the headers (so the client knows it is
//	                    parked), then blocks until X is resolved and writes the action
//	POST /resolve?id=X&action=A   wakes X (404 when nobody waits on X)
//	GET  /healthz
func runReference(addr string) error {
	var mu sync.Mutex
	waiting := map[string]chan string{}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"status":"ok"}`)
	})
	mux.HandleFunc("POST /park", func(w http.ResponseWriter, r *http.Request) {
		id := r.URL.Query().Get("id")
		ch := make(chan string, 1)
		mu.Lock()
		waiting[id] = ch
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		http.NewResponseController(w).Flush()
		select {
		case action := <-ch:
			fmt.Fprintf(w, `{"action":%q}`, action)
		case <-r.Context().Done():
			mu.Lock()
			delete(waiting, id)
			mu.Unlock()
		}
	})
	mux.HandleFunc("POST /resolve", func(w http.ResponseWriter, r *http.Request) {
		id := r.URL.Query().Get("id")
		mu.Lock()
		ch, ok := waiting[id]
		delete(waiting, id)
		mu.Unlock()
		if !ok {
			http.NotFound(w, r)
			return
		}
		ch <- r.URL.Query().Get("action")
		w.WriteHeader(http.StatusAccepted)
	})
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stdout, "Reference server running at http://%s\n", ln.Addr())
	return http.Serve(ln, mux)
}
