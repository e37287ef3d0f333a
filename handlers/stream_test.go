package handlers_test

import (
	"net/http"
	"testing"

	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
)

// TestStreamHeadersAndFirstFrame: the session stream is an uncached, unbuffered
// text/event-stream whose first frame is the heartbeat; a default stream is live only.
func TestStreamHeadersAndFirstFrame(t *testing.T) {
	t.Parallel()
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		srv := testserver.Start(t, db.NewURL(t))
		c := srv.Client("")
		sid := c.CreateSession(t, c.CreateAgent(t), "", "")
		// A prompt pending before the subscription is not replayed by default.
		parked, eid, _ := c.ParkClaude(t, sid, sid, "Bash", map[string]any{"command": "ls"})

		st := c.OpenStream(t, coreStreamPath(sid))
		for h, want := range map[string]string{"Content-Type": "text/event-stream", "Cache-Control": "no-cache", "X-Accel-Buffering": "no"} {
			if got := st.Header.Get(h); got != want {
				t.Errorf("%s = %q, want %q", h, got, want)
			}
		}
		f := st.Next(t, coreWait)
		if f.Event != "session.heartbeat" {
			t.Fatalf("first frame = %s %s, want the heartbeat", f.Event, f.Data)
		}
		if hb := f.Map(t); hb["type"] != "session.heartbeat" || hb["session_id"] != sid {
			t.Fatalf("heartbeat = %s", f.Data)
		}
		coreMustResolve(t, c, sid, eid, map[string]any{"action": "accept"})
		coreWaitResolved(t, st, eid)
		coreWantBehavior(t, parked, "allow")
	})
}

// TestStreamReplayPending: ?replay=pending sends every pending prompt of the session and
// its descendants (as seen from the session) before the heartbeat, then the live tail —
// without repeating the replayed prompts.
func TestStreamReplayPending(t *testing.T) {
	t.Parallel()
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		srv := testserver.Start(t, db.NewURL(t))
		c := srv.Client("")
		agent := c.CreateAgent(t)
		parent := c.CreateSession(t, agent, "", "")
		child := c.CreateSession(t, agent, parent, "worker:replay")
		live := coreOpenStream(t, c, parent)
		hookP, evP := corePark(t, c, live, parent, testserver.ClaudeBody("Bash", map[string]any{"command": "ls"}))
		hookC, evC := corePark(t, c, live, child, testserver.ClaudeBody("Edit", map[string]any{"file_path": "/tmp/x"}))
		eidP, eidC := evP["elicitation_id"].(string), evC["elicitation_id"].(string)

		st := c.OpenStream(t, coreStreamPath(parent)+"?replay=pending")
		var replayed []map[string]any
		for {
			f := st.Next(t, coreWait)
			if f.Event == "session.heartbeat" {
				break
			}
			if f.Event != "response.elicitation_request" {
				t.Fatalf("before the heartbeat: %s %s", f.Event, f.Data)
			}
			replayed = append(replayed, f.Map(t))
		}
		if len(replayed) != 2 || replayed[0]["elicitation_id"] != eidP || replayed[1]["elicitation_id"] != eidC {
			t.Fatalf("replayed %v, want %s then %s", replayed, eidP, eidC)
		}
		// Each replayed frame is the request event as the live stream delivered it.
		if !jsonEqual(replayed[0], evP) || !jsonEqual(replayed[1], evC) {
			t.Fatalf("replayed frames differ from the live ones:\n%v\n%v\n%v\n%v", replayed[0], evP, replayed[1], evC)
		}
		if coreParams(t, replayed[1])["target_session_id"] != child {
			t.Fatalf("child prompt replayed without target: %v", replayed[1])
		}

		// The live tail continues after the replay.
		hookN, evN := corePark(t, c, st, parent, testserver.ClaudeBody("Read", map[string]any{"file_path": "/etc/hosts"}))
		eidN := evN["elicitation_id"].(string)
		if eidN == eidP || eidN == eidC {
			t.Fatalf("the live tail repeated a replayed prompt: %v", evN)
		}
		for _, x := range []struct {
			sid, eid string
			hook     *testserver.Parked
		}{{parent, eidP, hookP}, {child, eidC, hookC}, {parent, eidN, hookN}} {
			coreMustResolve(t, c, x.sid, x.eid, map[string]any{"action": "accept"})
			coreWaitResolved(t, st, x.eid)
			coreWantBehavior(t, x.hook, "allow")
		}

		// Nothing pending: the replay is just the heartbeat.
		empty := c.OpenStream(t, coreStreamPath(parent)+"?replay=pending")
		if f := empty.Next(t, coreWait); f.Event != "session.heartbeat" {
			t.Fatalf("first frame with nothing pending = %s %s", f.Event, f.Data)
		}
		if r := c.Do(t, http.MethodGet, coreStreamPath("conv_nope"), nil); r.Status != http.StatusNotFound {
			t.Fatalf("stream of an unknown session: %d", r.Status)
		}
	})
}
