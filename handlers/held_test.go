package handlers_test

import (
	"bytes"
	"fmt"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
)

// goroutinesWith counts the goroutines whose stack names every one of frames.
func goroutinesWith(frames ...string) int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	count := 0
	for _, g := range bytes.Split(buf, []byte("\n\n")) {
		all := true
		for _, f := range frames {
			all = all && bytes.Contains(g, []byte(f))
		}
		if all {
			count++
		}
	}
	return count
}

// TestParkedHooksWaitOffNetHTTP: parked agent hooks wait off net/http (internal/held)
// and with no goroutine at all (elicit.Waiter.Then): none keeps a net/http connection
// goroutine in a handler, none a goroutine holding or waiting, and each is still
// answered with its verdict and the headers the middleware set (internal/held's tests
// check the raw answer and the close).
func TestParkedHooksWaitOffNetHTTP(t *testing.T) {
	srv := testserver.Start(t, testserver.Databases(t)[0].NewURL(t))
	c := srv.Client("")
	sid := c.CreateSession(t, c.CreateAgent(t), "", "")
	st := coreOpenStream(t, c, sid)
	const n = 8
	parked := make([]*testserver.Parked, n)
	eids := make([]string, n)
	for i := range parked {
		var ev map[string]any
		parked[i], ev = corePark(t, c, st, sid, testserver.ClaudeBody("Bash", map[string]any{"command": fmt.Sprint("echo ", i)}))
		eids[i] = ev["elicitation_id"].(string)
	}
	// The prompt is on the stream once attached; the request is held just after.
	var inHandler, waiting int
	for deadline := time.Now().Add(coreWait); ; {
		inHandler = goroutinesWith("net/http.(*conn).serve", "handlers.(*Server).parkHook")
		waiting = goroutinesWith("held.(*Set).Hold") + goroutinesWith("handlers.(*Server).heldAwait") +
			goroutinesWith("elicit.(*Waiter)")
		if inHandler == 0 && waiting == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d parked hooks wait in net/http's connection goroutines, %d goroutines hold or wait; want none",
				inHandler, waiting)
		}
		time.Sleep(10 * time.Millisecond) // polling the goroutine dump, not synchronising
	}
	for i, eid := range eids {
		action := "accept"
		if i%2 == 1 {
			action = "decline"
		}
		coreResolve(t, c, sid, eid, map[string]any{"action": action})
		r := parked[i].Wait(t, coreWait)
		want := map[string]string{"accept": `"behavior":"allow"`, "decline": `"behavior":"deny"`}[action]
		if r.Status != http.StatusOK || !strings.Contains(string(r.Body), want) {
			t.Fatalf("hook %d answered %d %s, want %s", i, r.Status, r.Body, want)
		}
		if r.Header.Get("X-Request-Id") == "" || r.Header.Get("Cache-Control") != "no-store" {
			t.Fatalf("hook %d answer lost the headers the middleware set: %v", i, r.Header)
		}
	}
}
