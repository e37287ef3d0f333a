package notify_test

import (
	"bytes"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
)

// lockedBuffer is a log the server's goroutines write into while the test reads it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestActionTokensNeverLogged: showing, refusing and using action links — and the
// parked hook they answer — write their log lines with the path as /act/…: no line
// carries a token, which would let whoever reads the logs answer prompts.
func TestActionTokensNeverLogged(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		var logs lockedBuffer
		// --auth none: the Host check (which logs what it refuses) is on.
		srv := testserver.StartLogged(t, db.NewURL(t), &logs, "--notify-allow-private", "--notify-retry-base", "200ms")
		local := srv.Client("")
		sid := local.CreateSession(t, local.CreateAgent(t), "", "links")
		parked, _, accept, decline := actionLinks(t, srv, local, sid)
		tokens := []string{accept[strings.LastIndex(accept, "/")+1:], decline[strings.LastIndex(decline, "/")+1:]}

		if status, _ := hit(t, http.MethodGet, accept, ""); status != http.StatusOK {
			t.Fatalf("GET action link: %d", status)
		}
		if status, _ := hit(t, http.MethodGet, accept+"x", ""); status < 400 || status >= 500 {
			t.Fatalf("GET a tampered action link: %d, want a 4xx", status)
		}
		req, _ := http.NewRequest(http.MethodGet, decline, nil)
		req.Host = "evil.example"
		if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusForbidden {
			t.Fatalf("action link under a foreign host name: %v %v", err, resp)
		} else {
			resp.Body.Close()
		}
		if status, _ := hit(t, http.MethodPost, decline, ""); status != http.StatusOK {
			t.Fatalf("POST action link: %d", status)
		}
		parked.Wait(t, wait)
		if status, _ := hit(t, http.MethodPost, decline, ""); status != http.StatusConflict {
			t.Fatalf("POST a used action link: %d, want 409", status)
		}

		// Five access log lines for /act/ requests and the foreign-host refusal, all
		// written after their answers went out: wait for them.
		deadline := time.Now().Add(wait)
		for {
			out := logs.String()
			n := 0
			for _, line := range strings.Split(out, "\n") {
				if strings.Contains(line, "msg=http ") && strings.Contains(line, "path=/act/") {
					n++
				}
			}
			if n >= 5 && strings.Contains(out, "foreign host name") && strings.Contains(out, "hooks/permission-request") {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the log lines of the action-link requests never appeared:\n%s", out)
			}
			time.Sleep(20 * time.Millisecond) // polling a log, not synchronizing
		}
		out := logs.String()
		for _, tok := range tokens {
			if strings.Contains(out, tok[:16]) {
				t.Fatalf("an action token (%s…) is in the server log:\n%s", tok[:16], out)
			}
		}
		if !strings.Contains(out, "path=/act/…") {
			t.Fatalf("no log line names the action route as /act/…:\n%s", out)
		}
	})
}
