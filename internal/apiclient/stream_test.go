package apiclient

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// TestStreamReadsFrames: frames are split on blank lines, data lines are joined with
// newlines, comments and ids are skipped, and the end of the body is reported as the
// stream ending (so a watcher reconnects).
func TestStreamReadsFrames(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer tok" {
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprint(w, `{"error":{"code":"unauthorized","message":"sign in"}}`)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "event: session.heartbeat\ndata: {}\n\n: ping\n\nid: 7\nevent: fragment\ndata: <p>\ndata: </p>\n\n")
	}))
	defer srv.Close()
	var got []Frame
	err := (&Client{Base: srv.URL, Token: "tok"}).Stream(context.Background(), "/s", func(f Frame) error {
		got = append(got, f)
		return nil
	})
	if !errors.Is(err, errStreamEnded) {
		t.Fatalf("end of body: %v, want errStreamEnded", err)
	}
	if len(got) != 2 || got[0].Event != EventHeartbeat || string(got[0].Data) != "{}" || got[1].Event != "fragment" || string(got[1].Data) != "<p>\n</p>" {
		t.Fatalf("frames %q", got)
	}
	err = (&Client{Base: srv.URL}).Stream(context.Background(), "/s", func(Frame) error { return nil })
	var apiErr *Error
	if !errors.As(err, &apiErr) || apiErr.Status != http.StatusUnauthorized || apiErr.Code != "unauthorized" {
		t.Fatalf("no token: %v, want the 401 envelope", err)
	}
}

// TestWatchStopsOnRefusal: a refusal retrying cannot change (401) ends Watch with it at
// once; a server error is retried with growing waits.
func TestWatchStopsOnRefusal(t *testing.T) {
	status := make(chan int, 3)
	status <- http.StatusServiceUnavailable
	status <- http.StatusServiceUnavailable
	status <- http.StatusUnauthorized
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(<-status)
		fmt.Fprint(w, `{"error":{"code":"x","message":"no"}}`)
	}))
	defer srv.Close()
	var waits []time.Duration
	err := (&Client{Base: srv.URL}).Watch(context.Background(), WatchHandler{
		Dropped: func(_ error, wait time.Duration) { waits = append(waits, wait) },
	})
	var apiErr *Error
	if !errors.As(err, &apiErr) || apiErr.Status != http.StatusUnauthorized {
		t.Fatalf("Watch = %v, want the 401", err)
	}
	if len(waits) != 2 || waits[0] != watchFirstWait || waits[1] != 2*watchFirstWait {
		t.Fatalf("waits %v, want %s then %s", waits, watchFirstWait, 2*watchFirstWait)
	}
}
