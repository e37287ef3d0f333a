package handlers_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
)

// BenchmarkResolveToAnswer is the human-paced path, a verdict waking a parked request,
// in-process so it can be profiled (go test -bench ResolveToAnswer -cpuprofile …): a
// Claude hook parked on the real server, a verdict through the API, timed from the
// verdict sent to the hook answered. The first database of the run (SQLite) unless -run filters.
func BenchmarkResolveToAnswer(b *testing.B) {
	for _, db := range testserver.Databases(b) {
		b.Run(db.Name, func(b *testing.B) {
			srv := testserver.Start(b, db.NewURL(b))
			c := srv.Client("")
			sid := c.CreateSession(b, c.CreateAgent(b), "", "bench")
			hook := "/v1/sessions/" + sid + "/hooks/permission-request"
			var total time.Duration
			for i := 0; b.Loop(); i++ {
				eid := fmt.Sprintf("elicit_claude_%032x", i+1)
				body := testserver.ClaudeBody("Bash", map[string]any{"command": "true"})
				body["_gatehouse_elicitation_id"] = eid
				p, got, _ := c.ParkAt(b, sid, hook, body)
				if got != eid {
					b.Fatalf("parked %s, want %s", got, eid)
				}
				start := time.Now()
				if r := c.Do(b, http.MethodPost, "/v1/sessions/"+sid+"/elicitations/"+eid+"/resolve", map[string]any{"action": "accept"}); r.Status != http.StatusAccepted {
					b.Fatalf("resolve: %d %s", r.Status, r.Body)
				}
				p.Wait(b, 10*time.Second)
				total += time.Since(start)
			}
			b.ReportMetric(float64(total.Microseconds())/float64(b.N), "µs/answer")
		})
	}
}
