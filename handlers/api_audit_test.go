package handlers_test

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/audit"
	"github.com/gatehouse-dev/gatehouse/internal/store"
	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
	"github.com/gatehouse-dev/gatehouse/models"
)

// auditDecide parks a prompt in sid directly in the store and decides it through the
// store's deciding statement (the one every path uses), at at.
func auditDecide(t *testing.T, st *store.Store, sid, eid string, d models.Decision) {
	t.Helper()
	ctx := context.Background()
	params, _ := json.Marshal(map[string]any{"message": "run " + eid + "?", "tool_input": map[string]any{"command": "echo <ok> & \"quoted\""}})
	if err := st.InsertElicitation(ctx, &models.Elicitation{ID: eid, SessionID: sid, Origin: models.OriginClaudePermission,
		Params: params, Status: models.StatusPending, CreatedAt: d.At.Add(-time.Minute), ExpiresAt: d.At.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if row, err := st.DecideElicitation(ctx, eid, sid, d); err != nil || row == nil {
		t.Fatalf("decide %s: %v %v", eid, row, err)
	}
}

// exportIDs runs an export as c and returns the elicitation ids of its JSON lines, in
// order, checking each line re-hashes to its hash and links to the previous line
// when the export is unfiltered.
func exportIDs(t *testing.T, c *testserver.Client, query string) []string {
	t.Helper()
	r := c.Do(t, http.MethodGet, "/v1/audit?"+query, nil)
	if r.Status != http.StatusOK {
		t.Fatalf("export %q: %d %s", query, r.Status, r.Body)
	}
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/jsonl") {
		t.Fatalf("export %q: content type %q", query, ct)
	}
	var ids []string
	sc := bufio.NewScanner(strings.NewReader(string(r.Body)))
	for sc.Scan() {
		var row audit.Row
		if err := json.Unmarshal(sc.Bytes(), &row); err != nil {
			t.Fatalf("export %q: line %q: %v", query, sc.Text(), err)
		}
		if got := rehash(t, row); got != row.Hash {
			t.Fatalf("export %q: line %q re-hashes to %s", query, sc.Text(), got)
		}
		ids = append(ids, row.ElicitationID)
	}
	return ids
}

// rehash recomputes an exported row's hash from the row alone.
func rehash(t *testing.T, row audit.Row) string {
	t.Helper()
	h, err := row.Expected()
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// TestAuditExportFiltersFormatsAndAccess: the export holds every decision of the trees
// the caller may read (a person's verdicts, a hook answered through the API, timeouts)
// in chain order and nothing of other people's trees; session, person, outcome and time
// filters select exactly their rows; CSV carries the same rows under a header; bad
// parameters are 400s naming the parameter; a session the caller cannot read is 404.
func TestAuditExportFiltersFormatsAndAccess(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		srv := testserver.Start(t, db.NewURL(t), "--auth", "header")
		st := srv.App.Store
		alice, bob, carol := srv.Client("alice@example.com"), srv.Client("bob@example.com"), srv.Client("carol@example.com")
		aRoot := alice.CreateSession(t, alice.CreateAgent(t), "", "")
		aChild := alice.CreateSession(t, alice.CreateAgent(t), aRoot, "sub")
		bRoot := bob.CreateSession(t, bob.CreateAgent(t), "", "")

		t0 := time.Date(2026, 2, 1, 9, 0, 0, 0, time.UTC)
		at := func(h int) time.Time { return t0.Add(time.Duration(h) * time.Hour) }
		auditDecide(t, st, aRoot, "a1", models.Decision{Status: models.StatusResolved, Action: "accept", By: "alice@example.com", Via: models.ViaPage, At: at(0)})
		auditDecide(t, st, bRoot, "b1", models.Decision{Status: models.StatusResolved, Action: "accept", By: "bob@example.com", Via: models.ViaAPI, At: at(1)})
		auditDecide(t, st, aChild, "a2", models.Decision{Status: models.StatusResolved, Action: "decline", Content: json.RawMessage(`{"reason": "no\nway"}`), By: "alice@example.com", Via: models.ViaInbox, At: at(2)})
		auditDecide(t, st, aChild, "a3", models.Decision{Status: models.StatusExpired, By: "gatehouse", Via: models.ViaTimeout, At: at(3)})
		auditDecide(t, st, aRoot, "a4", models.Decision{Status: models.StatusResolved, Action: "accept", By: "dave@example.com", Via: models.ViaAPI, At: at(4)})
		// And one decided the way a person does: a parked hook answered through the API.
		p, eid, _ := alice.ParkClaude(t, aRoot, aRoot, "Bash", map[string]any{"command": "make deploy"})
		if r := alice.Do(t, http.MethodPost, "/v1/sessions/"+aRoot+"/elicitations/"+eid+"/resolve", map[string]any{"action": "accept"}); r.Status != http.StatusAccepted {
			t.Fatalf("resolve: %d %s", r.Status, r.Body)
		}
		p.Wait(t, 10*time.Second)

		all := []string{"a1", "a2", "a3", "a4", eid}
		cases := []struct {
			c     *testserver.Client
			query string
			want  []string
		}{
			{alice, "", all},
			{alice, "format=jsonl", all},
			{bob, "", []string{"b1"}},
			{carol, "", nil},
			{alice, "session=" + aChild, []string{"a2", "a3"}},
			{alice, "session=" + aRoot, all},
			{alice, "person=alice@example.com", []string{"a1", "a2", eid}},
			{alice, "outcome=accept", []string{"a1", "a4", eid}},
			{alice, "outcome=decline", []string{"a2"}},
			{alice, "outcome=expired", []string{"a3"}},
			{alice, "outcome=resolved&person=dave@example.com", []string{"a4"}},
			{alice, "from=" + url.QueryEscape(at(2).Format(time.RFC3339)) + "&to=" + url.QueryEscape(at(4).Format(time.RFC3339)), []string{"a2", "a3"}},
			{alice, "from=" + url.QueryEscape(at(3).Format(time.RFC3339)), []string{"a3", "a4", eid}},
		}
		for _, c := range cases {
			if got := exportIDs(t, c.c, c.query); fmt.Sprint(got) != fmt.Sprint(c.want) {
				t.Errorf("%s ?%s: got %v, want %v", c.c.User, c.query, got, c.want)
			}
		}

		r := alice.Do(t, http.MethodGet, "/v1/audit?format=csv&session="+aChild, nil)
		if r.Status != http.StatusOK || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/csv") {
			t.Fatalf("csv: %d %q", r.Status, r.Header.Get("Content-Type"))
		}
		recs, err := csv.NewReader(strings.NewReader(string(r.Body))).ReadAll()
		if err != nil {
			t.Fatalf("csv does not parse: %v\n%s", err, r.Body)
		}
		if len(recs) != 3 || fmt.Sprint(recs[0]) != fmt.Sprint(audit.Columns) || recs[1][1] != "a2" || recs[2][1] != "a3" {
			t.Fatalf("csv rows: %q", recs)
		}
		if content := recs[1][12]; !strings.Contains(content, `no\nway`) || recs[2][12] != "" || recs[1][5] != "decline" {
			t.Fatalf("csv a2 content %q, a3 content %q", content, recs[2][12])
		}

		for query, field := range map[string]string{
			"format=xml":     "format",
			"outcome=maybe":  "outcome",
			"from=yesterday": "from",
			"to=2026-13-01":  "to",
			"from=" + url.QueryEscape(at(2).Format(time.RFC3339)) + "&to=" + url.QueryEscape(at(1).Format(time.RFC3339)): "to",
		} {
			r := alice.Do(t, http.MethodGet, "/v1/audit?"+query, nil)
			if r.Status != http.StatusBadRequest || !strings.Contains(string(r.Body), field) {
				t.Errorf("?%s: %d %s, want 400 naming %s", query, r.Status, r.Body, field)
			}
		}
		if r := alice.Do(t, http.MethodGet, "/v1/audit?session="+bRoot, nil); r.Status != http.StatusNotFound {
			t.Errorf("alice exporting bob's session: %d %s", r.Status, r.Body)
		}
	})
}

// TestAuditExportStreamsInConstantMemory: exporting far more rows than fit in the
// memory the export may use arrives complete while the server's live heap stays far
// below the size of the export — rows are written as they are read.
func TestAuditExportStreamsInConstantMemory(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		srv := testserver.Start(t, db.NewURL(t))
		c := srv.Client("")
		sid := c.CreateSession(t, c.CreateAgent(t), "", "")
		const rows = 30000
		testserver.SeedAuditRows(t, srv.App.Store, sid, rows, 1024)

		old := debug.SetGCPercent(20)
		defer debug.SetGCPercent(old)
		runtime.GC()
		base := heapLive()
		var peak atomic.Uint64
		stop := make(chan struct{})
		sampled := make(chan struct{})
		go func() {
			defer close(sampled)
			tk := time.NewTicker(2 * time.Millisecond)
			defer tk.Stop()
			for {
				if h := heapLive(); h > peak.Load() {
					peak.Store(h)
				}
				select {
				case <-stop:
					return
				case <-tk.C:
				}
			}
		}()
		resp, err := http.Get(srv.URL + "/v1/audit?format=csv")
		if err != nil {
			t.Fatal(err)
		}
		var lines, size int
		br := bufio.NewReaderSize(resp.Body, 64<<10)
		for {
			line, err := br.ReadSlice('\n')
			size += len(line)
			if err == io.EOF {
				break
			}
			if err != nil && err != bufio.ErrBufferFull {
				t.Fatal(err)
			}
			if err == nil {
				lines++
			}
		}
		resp.Body.Close()
		close(stop)
		<-sampled
		if lines != rows+1 {
			t.Fatalf("export has %d lines, want %d rows and a header", lines, rows)
		}
		grew := int64(peak.Load()) - int64(base)
		t.Logf("exported %d rows, %.1f MiB; live heap grew by at most %.1f MiB", rows, float64(size)/(1<<20), float64(grew)/(1<<20))
		if size < 30<<20 {
			t.Fatalf("export is only %d bytes: the test needs rows bigger than the bound", size)
		}
		if grew > 12<<20 {
			t.Fatalf("live heap grew by %.1f MiB while exporting %.1f MiB: the export is buffered", float64(grew)/(1<<20), float64(size)/(1<<20))
		}
	})
}

// heapLive is the heap's object bytes (live and not yet swept).
func heapLive() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// TestAuditCheckpointForAdmins: the server takes the day's signed checkpoint of the
// chain's head when it starts, appends it to --audit-checkpoint-file, and serves it at
// GET /v1/audit/checkpoint to admins only; it verifies with the public key derived
// from the server's secret.
func TestAuditCheckpointForAdmins(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		file := filepath.Join(t.TempDir(), "checkpoints.jsonl")
		srv := testserver.Start(t, db.NewURL(t), "--auth", "header", "--admins", "carol@example.com", "--audit-checkpoint-file", file)
		r := srv.Client("carol@example.com").Do(t, http.MethodGet, "/v1/audit/checkpoint", nil)
		if r.Status != http.StatusOK {
			t.Fatalf("admin: %d %s", r.Status, r.Body)
		}
		var cp audit.Checkpoint
		if err := json.Unmarshal(r.Body, &cp); err != nil {
			t.Fatal(err)
		}
		pub, err := audit.ParsePublicKey(audit.NewSigner([]byte(testserver.TestSessionSecret)).PublicKey())
		if err != nil {
			t.Fatal(err)
		}
		if err := cp.Check(pub); err != nil || cp.Day != time.Now().UTC().Format(audit.DayLayout) || cp.Seq != 0 || cp.Hash != audit.Genesis {
			t.Fatalf("checkpoint %+v: %v", cp, err)
		}
		body, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		inFile, err := audit.ReadCheckpoints(strings.NewReader(string(body)))
		if err != nil || len(inFile) != 1 || inFile[0] != cp {
			t.Fatalf("checkpoint file %q: %v", body, err)
		}
		r = srv.Client("alice@example.com").Do(t, http.MethodGet, "/v1/audit/checkpoint", nil)
		var env struct {
			Error struct{ Code, Message string } `json:"error"`
		}
		if r.Status != http.StatusForbidden || json.Unmarshal(r.Body, &env) != nil || env.Error.Code == "" || env.Error.Message == "" {
			t.Fatalf("non-admin: %d %s", r.Status, r.Body)
		}
	})
}
