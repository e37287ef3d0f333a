package main

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"
)

// receiver is the bench's webhook receiver: a plain net/http server on loopback (HTTP
// keep-alive on, as a person's receiver would be) that counts deliveries by type and
// prompt and answers 204 at once. It does not verify signatures — the notify tests do
// that; here it must stay cheap so the bench measures the server, not its receiver.
// It can hold requests (answer nothing until released), which the dispatcher
// throughput measurement uses to let a backlog build up.
type receiver struct {
	URL string
	srv *http.Server

	mu sync.Mutex
	// changed is closed and replaced whenever a count moves, so waiters wake on
	// progress instead of sleeping.
	changed chan struct{}
	// held is non-nil while requests are held; closing it releases them.
	held     chan struct{}
	heldNow  int
	created  map[string]time.Time // prompt → when its first elicitation.created was answered 2xx
	resolved map[string]time.Time // prompt → when its first elicitation.resolved was answered 2xx
	// wasHeld marks the deliveries (type and prompt) answered only at a release.
	wasHeld  map[string]bool
	requests int
	last     time.Time // when the latest first-time delivery was answered
}

// startReceiver listens on a loopback port.
func startReceiver() (*receiver, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	r := &receiver{URL: "http://" + ln.Addr().String() + "/hook", changed: make(chan struct{})}
	r.reset()
	r.srv = &http.Server{Handler: r, ReadHeaderTimeout: 10 * time.Second}
	go r.srv.Serve(ln)
	return r, nil
}

func (r *receiver) close() { r.srv.Close() }

// reset forgets every delivery counted so far.
func (r *receiver) reset() {
	r.mu.Lock()
	r.created, r.resolved, r.wasHeld, r.requests, r.last = map[string]time.Time{}, map[string]time.Time{}, map[string]bool{}, 0, time.Time{}
	r.mu.Unlock()
}

// hold makes requests wait unanswered until release.
func (r *receiver) hold() {
	r.mu.Lock()
	if r.held == nil {
		r.held = make(chan struct{})
	}
	r.mu.Unlock()
}

// release answers every held request and stops holding; it returns when it did.
func (r *receiver) release() time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.held != nil {
		close(r.held)
		r.held = nil
	}
	return time.Now()
}

func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	var ev struct {
		Type string `json:"type"`
		Data struct {
			ElicitationID string `json:"elicitation_id"`
		} `json:"data"`
	}
	body, err := io.ReadAll(io.LimitReader(req.Body, 1<<20))
	if err != nil || json.Unmarshal(body, &ev) != nil || ev.Data.ElicitationID == "" {
		http.Error(w, "not a delivery", http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	r.requests++
	held := r.held
	if held != nil {
		r.heldNow++
		r.wakeLocked()
	}
	r.mu.Unlock()
	if held != nil {
		select {
		case <-held:
		case <-req.Context().Done():
			return
		}
	}
	now := time.Now()
	r.mu.Lock()
	if held != nil {
		r.heldNow--
	}
	seen := r.created
	if ev.Type == "elicitation.resolved" {
		seen = r.resolved
	}
	if _, dup := seen[ev.Data.ElicitationID]; !dup && (ev.Type == "elicitation.created" || ev.Type == "elicitation.resolved") {
		seen[ev.Data.ElicitationID] = now
		r.last = now
		if held != nil {
			r.wasHeld[ev.Type+"\x00"+ev.Data.ElicitationID] = true
		}
		r.wakeLocked()
	}
	r.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

func (r *receiver) wakeLocked() {
	close(r.changed)
	r.changed = make(chan struct{})
}

// recvState is a snapshot of the receiver's counts.
type recvState struct {
	Created, Resolved, Held, Requests int
}

// waitUntil waits, without polling, until cond holds for the receiver's counts, or
// fails after d naming what it last saw.
func (r *receiver) waitUntil(d time.Duration, what string, cond func(recvState) bool) error {
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	for {
		r.mu.Lock()
		st := recvState{Created: len(r.created), Resolved: len(r.resolved), Held: r.heldNow, Requests: r.requests}
		ch := r.changed
		r.mu.Unlock()
		if cond(st) {
			return nil
		}
		select {
		case <-ch:
		case <-deadline.C:
			return fmt.Errorf("%s: not within %s (created %d, resolved %d, held %d)", what, d, st.Created, st.Resolved, st.Held)
		}
	}
}

// hasCreated reports whether the prompt's elicitation.created delivery was answered.
func (r *receiver) hasCreated(eid string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.created[eid]
	return ok
}

// since counts the first-time deliveries of typ answered after t that were not held
// (held: answered only at the release), and how many were held.
func (r *receiver) since(typ string, t time.Time) (fresh, held int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	seen := r.created
	if typ == "elicitation.resolved" {
		seen = r.resolved
	}
	for eid, at := range seen {
		switch {
		case r.wasHeld[typ+"\x00"+eid]:
			held++
		case at.After(t):
			fresh++
		}
	}
	return fresh, held
}

// webhookSecret returns a fresh Standard Webhooks secret: whsec_ and base64 of 32 bytes.
func webhookSecret() string {
	key := make([]byte, 32)
	rand.Read(key)
	return "whsec_" + base64.StdEncoding.EncodeToString(key)
}

// putWebhook points the caller's (in --auth none: "local") webhook at url; url "" turns
// notifications off.
func putWebhook(hc *http.Client, base, url string) error {
	doc := map[string]any{}
	if url != "" {
		doc["webhook"] = map[string]any{"url": url, "secret": webhookSecret()}
	}
	raw, _ := json.Marshal(doc)
	req, _ := http.NewRequest(http.MethodPut, base+"/v1/me/notifications", bytes.NewReader(raw))
	req.Header.Set("Content-Type", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("PUT /v1/me/notifications: %d %s", resp.StatusCode, b)
	}
	return nil
}
