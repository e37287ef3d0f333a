package apiclient

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"
)

// Decision is how a prompt ended, as a watcher learns it.
type Decision struct {
	SessionID, ID string
	// Outcome is "approved", "rejected" or "cancelled" (a person's verdict, By says
	// whose), "expired" or "abandoned" (nobody's), or "decided" when the server did not
	// say (the prompt is no longer the caller's to see).
	Outcome string
	By      string
}

// WatchHandler is told what a watch sees. Each prompt is announced once, however often
// the stream reconnects, and then its decision once.
type WatchHandler struct {
	// Pending is called for each prompt waiting — those already waiting when the watch
	// starts, then each as it arrives.
	Pending func(Pending)
	// Decided is called when a prompt announced before has ended.
	Decided func(Decision)
	// Connected, when set, is told each time the stream is open and caught up: from
	// then on nothing is missed until it drops.
	Connected func()
	// Dropped, when set, is told that the stream dropped with err and is reopened
	// after wait.
	Dropped func(err error, wait time.Duration)
}

// Backoff bounds of Watch's reconnects: the first wait, doubled after each failed
// attempt up to the longest.
const (
	watchFirstWait   = 500 * time.Millisecond
	watchLongestWait = 30 * time.Second
)

// Watch follows every prompt the caller can see (GET /v1/me/stream) until ctx ends, and
// then returns nil. A dropped stream is reopened with backoff; after each (re)connect,
// once the stream's heartbeat says nothing more will be missed, what is pending is
// read again, so prompts that arrived while it was down are announced, and those
// announced before that are no longer pending are reported decided. An answer that
// retrying cannot change (401, 403, 404) ends the watch with that *Error.
func (c *Client) Watch(ctx context.Context, h WatchHandler) error {
	w := &watch{c: c, h: h, announced: map[string]string{}}
	wait := watchFirstWait
	for {
		connected := false
		err := c.Stream(ctx, "/v1/me/stream", func(f Frame) error {
			if !connected && f.Event == EventHeartbeat {
				connected = true
				wait = watchFirstWait
				if err := w.catchUp(ctx); err != nil {
					return err
				}
				if h.Connected != nil {
					h.Connected()
				}
				return nil
			}
			return w.frame(ctx, f)
		})
		if ctx.Err() != nil {
			return nil
		}
		var apiErr *Error
		if errors.As(err, &apiErr) && apiErr.Status != http.StatusTooManyRequests && apiErr.Status < 500 {
			return err
		}
		if h.Dropped != nil {
			h.Dropped(err, wait)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		}
		wait = min(2*wait, watchLongestWait)
	}
}

// watch is one Watch's memory: the prompts announced and not yet decided, by id, with
// their owning session.
type watch struct {
	c         *Client
	h         WatchHandler
	announced map[string]string
}

// catchUp announces what is pending and not announced yet, and reports decided what
// was announced and is pending no more.
func (w *watch) catchUp(ctx context.Context) error {
	list, err := w.c.Pending(ctx)
	if err != nil {
		return err
	}
	still := make(map[string]bool, len(list))
	for _, p := range list {
		still[p.ID] = true
		w.announce(p)
	}
	for id, sid := range w.announced {
		if !still[id] {
			w.decided(ctx, sid, id)
		}
	}
	return nil
}

func (w *watch) announce(p Pending) {
	if _, ok := w.announced[p.ID]; ok {
		return
	}
	w.announced[p.ID] = p.SessionID
	if w.h.Pending != nil {
		w.h.Pending(p)
	}
}

func (w *watch) decided(ctx context.Context, sid, id string) {
	delete(w.announced, id)
	if w.h.Decided != nil {
		w.h.Decided(w.c.Decision(ctx, sid, id))
	}
}

// frame handles one stream frame.
func (w *watch) frame(ctx context.Context, f Frame) error {
	var ev struct {
		ID     string         `json:"elicitation_id"`
		Params map[string]any `json:"params"`
		Risk   struct {
			Level string `json:"level"`
		} `json:"risk"`
	}
	switch f.Event {
	case EventRequest:
		if err := json.Unmarshal(f.Data, &ev); err != nil || ev.ID == "" {
			return nil // not a prompt this client understands: skip it
		}
		w.announce(Pending{SessionID: owner(ev.Params), ID: ev.ID, Message: summary(ev.Params),
			Risk: ev.Risk.Level, Agent: str(ev.Params["vendor"])})
	case EventResolved:
		if err := json.Unmarshal(f.Data, &ev); err != nil {
			return nil
		}
		if sid, ok := w.announced[ev.ID]; ok {
			w.decided(ctx, sid, ev.ID)
		}
	}
	return nil
}

// owner is the session a prompt belongs to: target_session_id on an ancestor's copy,
// else the session its approve_path (/approve/{session}/{id}) names.
func owner(params map[string]any) string {
	if t := str(params["target_session_id"]); t != "" {
		return t
	}
	parts := strings.Split(strings.Trim(str(params["approve_path"]), "/"), "/")
	if len(parts) == 3 && parts[0] == "approve" {
		return parts[1]
	}
	return ""
}

// Decision asks the server how prompt id of session sid ended. When it cannot say,
// the outcome is "decided".
func (c *Client) Decision(ctx context.Context, sid, id string) Decision {
	d := Decision{SessionID: sid, ID: id, Outcome: "decided"}
	if sid == "" {
		return d
	}
	var got struct {
		Status, Action, Outcome string
		By                      string `json:"resolved_by"`
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := c.do(ctx, http.MethodGet, "/v1/sessions/"+sid+"/elicitations/"+id, nil, &got); err != nil || got.Status != "resolved" {
		return d
	}
	switch {
	case got.Action == "accept":
		d.Outcome, d.By = "approved", got.By
	case got.Action == "decline":
		d.Outcome, d.By = "rejected", got.By
	case got.Action == "cancel":
		d.Outcome, d.By = "cancelled", got.By
	case got.Outcome != "":
		d.Outcome = got.Outcome
	}
	return d
}
