package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver for reading the stored rows

	"github.com/gatehouse-dev/gatehouse/internal/agents/codex"
	"github.com/gatehouse-dev/gatehouse/internal/ids"
	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
	"github.com/gatehouse-dev/gatehouse/models"
)

// Settings of TestChaos.
const (
	// chaosDurationEnv sets how long load and chaos run (`make chaos` sets 60s).
	chaosDurationEnv     = "GATEHOUSE_CHAOS_DURATION"
	chaosDefaultDuration = 15 * time.Second
	// chaosSeedEnv replays a run's random choices (the seed is logged).
	chaosSeedEnv     = "GATEHOUSE_CHAOS_SEED"
	chaosDefaultSeed = 1

	chaosReplicas = 3
	chaosGrace    = 2 * time.Second
	// chaosRSSLimit is a generous bound on each replica's resident memory.
	chaosRSSLimit = 300 << 20
	// chaosOutageMargin: a 503 is allowed if its request overlapped the database
	// outage widened by this much on each side.
	chaosOutageMargin = 2 * time.Second
	// chaosDrainTimeout bounds the end of the run: every client has its answer and no
	// prompt is pending any more.
	chaosDrainTimeout = 60 * time.Second
	// chaosMaxParked and chaosMaxProcesses are the per-person caps, set explicitly at
	// their defaults so the run has them in place. Every client parks as one person
	// (chaosOwner), at most 20 at once (chaosAgents) on any replica — far below the
	// cap even with re-parks after a SIGKILL — so a 429 would mean a slot that was
	// never given back, and fails the run like any answer that is not a verdict.
	chaosMaxParked    = 1000
	chaosMaxProcesses = 8
)

const chaosOwner = "owner@example.com"

// chaosPeople decide; each has an edit grant on the root of the session tree.
var chaosPeople = []string{"alice@example.com", "bob@example.com", "carol@example.com"}

// chaosAgents is how many clients park at once, per kind (20 in all).
var chaosAgents = map[string]int{"claude": 8, "codex": 6, "policy": 6}

// TestChaos runs three replicas on one database of a private Postgres cluster under
// load — Claude PermissionRequest hooks (with re-attach ids), Codex app-server requests
// (deterministic ids) and policy ASKs, streams open, three people deciding on random
// replicas and racing each other — while replicas are SIGKILLed and restarted at random
// and the database is restarted once. Clients whose replica dies re-park on another.
// At the end it checks that every client got its own verdict or the "no decision"
// answer, that every verdict is stored and logged exactly once, that the only 5xx are
// 503s while the database was down, and that memory stayed bounded.
func TestChaos(t *testing.T) {
	if testing.Short() {
		t.Skip("chaos test skipped in -short mode")
	}
	testserver.PostgresDB(t) // skip (or fail under GATEHOUSE_REQUIRE_POSTGRES) like every Postgres test
	dur := chaosDefaultDuration
	if v := os.Getenv(chaosDurationEnv); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			t.Fatalf("%s=%q: want a positive duration like 60s", chaosDurationEnv, v)
		}
		dur = d
	}
	seed := uint64(chaosDefaultSeed)
	if v := os.Getenv(chaosSeedEnv); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("%s=%q: want a number", chaosSeedEnv, v)
		}
		seed = n
	}
	t.Logf("chaos: %s of load, seed %d (%s, %s)", dur, seed, chaosDurationEnv, chaosSeedEnv)

	cl := testserver.StartCluster(t)
	dbURL := cl.CreateDB(t)
	policyFile := filepath.Join(t.TempDir(), "policies.yaml")
	if err := os.WriteFile(policyFile, []byte(`policies:
  - name: ask_chaos
    on: ["tool_call:Bash"]
    action: ASK
    reason: Chaos asks before every command
`), 0o644); err != nil {
		t.Fatal(err)
	}
	// Without the heap floor: the memory bound is on what the run's load leaves (a
	// leak grows past it), not on the floor's fixed headroom, which the race
	// detector's shadow memory counts several times over (64 MiB of floor took a
	// race build's replica from about 135 to 360 MiB).
	serve := func() *proc {
		return startServe(t, dbURL, "--auth", "header", "--disconnect-grace", chaosGrace.String(),
			"--policy-file", policyFile, "--log-format", "json", "--gc-min-heap-mib", "0",
			"--max-parked-per-person", strconv.Itoa(chaosMaxParked),
			"--max-upstream-processes-per-person", strconv.Itoa(chaosMaxProcesses))
	}
	rs := &replicaSet{slots: make([]*proc, chaosReplicas)}
	rs.set(0, serve()) // the first one migrates the database alone
	for i := 1; i < chaosReplicas; i++ {
		rs.set(i, serve())
	}

	// The session tree: the owner's root with one child per kind of agent; the people
	// are granted edit on the root, which the children inherit.
	owner := &testserver.Client{Base: rs.get(0).URL, User: chaosOwner, HC: &http.Client{}}
	agent := owner.CreateAgent(t)
	r := &chaosRun{seed: seed, rs: rs, tf: newTraffic(), stopLoad: make(chan struct{})}
	r.root = owner.CreateSession(t, agent, "", "chaos")
	r.sids = map[string]string{}
	for kind := range chaosAgents {
		r.sids[kind] = owner.CreateSession(t, agent, r.root, "chaos "+kind)
	}
	for _, p := range chaosPeople {
		if resp := owner.Do(t, http.MethodPut, "/v1/sessions/"+r.root+"/permissions",
			map[string]any{"user": p, "level": "edit"}); resp.Status != http.StatusOK {
			t.Fatalf("grant %s edit: %d %s", p, resp.Status, resp.Body)
		}
	}
	db, err := sql.Open("pgx", dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(2)
	var head int64
	if err := db.QueryRow(`SELECT event_seq FROM sessions WHERE id = $1`, r.root).Scan(&head); err != nil {
		t.Fatalf("read the root's event head: %v", err)
	}

	// Background work: agents until the load stops, people and watchers until the
	// drain is over. None of it touches t; on any early exit of the test they stop.
	var runCtx, peopleCtx context.Context
	var cancelRun, cancelPeople context.CancelFunc
	runCtx, cancelRun = context.WithCancel(context.Background())
	peopleCtx, cancelPeople = context.WithCancel(context.Background())
	r.ctx = runCtx
	var agents, people sync.WaitGroup
	t.Cleanup(func() { cancelRun(); cancelPeople(); agents.Wait(); people.Wait() })

	for i, name := range chaosPeople {
		p := &person{run: r, name: name, index: i, rng: rand.New(rand.NewPCG(seed, uint64(10+i))),
			seen: map[string]bool{}, sem: make(chan struct{}, 4)}
		w := &watcher{person: p, lastSeq: head, resolved: map[string][]int64{}}
		r.watchers = append(r.watchers, w)
		people.Add(3)
		go func() { defer people.Done(); w.run(peopleCtx) }()
		go func() { defer people.Done(); p.sweep(peopleCtx) }()
		go func() { defer people.Done(); p.decideAll(peopleCtx) }()
		r.people = append(r.people, p)
	}
	rss := &rssSampler{max: map[int]int64{}}
	people.Add(1)
	go func() { defer people.Done(); rss.run(peopleCtx, rs) }()
	n := 0
	for _, kind := range []string{"claude", "codex", "policy"} {
		for j := 0; j < chaosAgents[kind]; j++ {
			n++
			agents.Add(1)
			go func(n int) { defer agents.Done(); r.agent(n, kind) }(n)
		}
	}

	// Chaos, on the test goroutine: SIGKILL a random replica every 1.5–3.5 s (never the
	// last one up) and bring it back 0.3–1.5 s later; restart Postgres once, halfway.
	rng := rand.New(rand.NewPCG(seed, 1))
	between := func(lo, hi time.Duration) time.Duration { return lo + time.Duration(rng.Int64N(int64(hi-lo))) }
	start := time.Now()
	end, pgAt := start.Add(dur), start.Add(dur/2)
	pgDone := false
	nextKill := start.Add(between(1500*time.Millisecond, 3500*time.Millisecond))
	backAt := map[int]time.Time{}
	kills, restarts := 0, 0
	restartSlot := func(i int) {
		rs.set(i, serve())
		restarts++
		delete(backAt, i)
	}
	for {
		next := earliest(end, nextKill)
		if !pgDone {
			next = earliest(next, pgAt)
		}
		for _, at := range backAt {
			next = earliest(next, at)
		}
		if d := time.Until(next); d > 0 {
			time.Sleep(d) // chaos pacing: this is the schedule, not a wait for an event
		}
		now := time.Now()
		if !now.Before(end) {
			break
		}
		if !pgDone && !now.Before(pgAt) {
			pgDone = true
			r.outageStart, r.outageEnd, r.healthDown = restartPostgres(t, cl, rs)
			t.Logf("chaos: Postgres restarted at +%s; unavailable for %s (healthz 503 after %s)",
				r.outageStart.Sub(start).Round(time.Millisecond), r.outageEnd.Sub(r.outageStart).Round(time.Millisecond),
				r.healthDown.Round(time.Millisecond))
			continue
		}
		for i, at := range backAt {
			if !now.Before(at) {
				restartSlot(i)
			}
		}
		if !now.Before(nextKill) {
			var up []int
			for i := range chaosReplicas {
				if p := rs.get(i); p != nil {
					if p.Exited() {
						t.Fatalf("replica %d (%s) exited on its own: %v\n%s", i, p.URL, p.err, p.stderr.String())
					}
					up = append(up, i)
				}
			}
			if len(up) > 1 {
				i := up[rng.IntN(len(up))]
				p := rs.get(i)
				rs.set(i, nil)
				p.Kill(t)
				kills++
				r.kills = append(r.kills, killed{at: time.Now(), url: p.URL})
				backAt[i] = now.Add(between(300*time.Millisecond, 1500*time.Millisecond))
			}
			nextKill = now.Add(between(1500*time.Millisecond, 3500*time.Millisecond))
		}
	}
	if !pgDone {
		t.Fatalf("the run ended before the Postgres restart")
	}

	// Drain: no new requests, every replica back, every client answered, then every
	// prompt ended (decided, or abandoned after the grace when nobody came back).
	close(r.stopLoad)
	for i := range backAt {
		restartSlot(i)
	}
	loadStopped := time.Now()
	drained := make(chan struct{})
	go func() { agents.Wait(); close(drained) }()
	select {
	case <-drained:
	case <-time.After(chaosDrainTimeout):
		cancelRun()
		<-drained
		t.Errorf("clients still waiting %s after the load stopped (cancelled; see unfinished requests below)", chaosDrainTimeout)
	}
	waitNoPending(t, r, db, loadStopped.Add(chaosDrainTimeout))
	cancelPeople()
	people.Wait()
	// A verdict whose replica was killed between the commit and its event reaches the
	// log only through a live replica's repair sweep (elicit.RepublishUnlogged, for
	// prompts decided over 2 s ago): the streams can show it only after that.
	waitAllLogged(t, db, time.Now().Add(chaosDrainTimeout))
	for _, w := range r.watchers {
		w.catchUp(t, rs)
	}

	// Judge.
	c := &checker{t: t, r: r, db: db}
	c.loadRows()
	c.checkAnswers()
	c.checkVerdicts()
	c.checkLog()
	c.checkServerErrors()
	c.checkMemory(rss)
	c.checkStderr(rs)
	c.report()

	resolveCalls, outcomes := 0, map[string]int{}
	races := 0
	byEID := map[string]map[string]bool{}
	for _, v := range r.verdicts {
		resolveCalls++
		outcomes[v.outcomeOrUnknown()]++
		if byEID[v.eid] == nil {
			byEID[v.eid] = map[string]bool{}
		}
		byEID[v.eid][v.person] = true
	}
	for _, who := range byEID {
		if len(who) > 1 {
			races++
		}
	}
	kinds, reparks := map[string]int{}, 0
	for _, q := range r.requests {
		kinds[q.kind]++
		reparks += q.attempts - 1
	}
	t.Logf("chaos summary: %d requests (claude %d, codex %d, policy %d), %d re-parks after a replica died or a 503; "+
		"%d resolve calls (%v), %d prompts decided by more than one person at once; rows %v; "+
		"%d SIGKILLs, %d restarts, 1 Postgres restart (%s down); %d HTTP requests, %d answered 503; max RSS %v",
		len(r.requests), kinds["claude"], kinds["codex"], kinds["policy"], reparks,
		resolveCalls, outcomes, races, c.rowSummary(), kills, restarts,
		r.outageEnd.Sub(r.outageStart).Round(time.Millisecond), r.tf.requests, len(r.tf.serverErr), rss.summary())
}

func earliest(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// restartPostgres stops the cluster, waits until a replica's /healthz says 503, starts
// it again and waits until every replica's /healthz says 200. It returns the outage
// window and how long the health check took to notice.
func restartPostgres(t *testing.T, cl *testserver.Cluster, rs *replicaSet) (from, to time.Time, noticed time.Duration) {
	t.Helper()
	hc := &http.Client{Timeout: 5 * time.Second}
	health := func(base string) int {
		resp, err := hc.Get(base + "/healthz")
		if err != nil {
			return 0
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	from = time.Now()
	cl.Stop(t)
	deadline := time.Now().Add(15 * time.Second)
	for health(rs.live()[0]) != http.StatusServiceUnavailable {
		if time.Now().After(deadline) {
			t.Fatalf("/healthz did not say 503 within 15s of the database stopping")
		}
		time.Sleep(20 * time.Millisecond) // /healthz pushes nothing: ask again
	}
	noticed = time.Since(from)
	cl.Start(t)
	deadline = time.Now().Add(30 * time.Second)
	for _, base := range rs.live() {
		for health(base) != http.StatusOK {
			if time.Now().After(deadline) {
				t.Fatalf("%s/healthz not 200 within 30s of the database coming back", base)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	return from, time.Now(), noticed
}

// waitNoPending waits until no prompt of the run is pending (the people decide what
// they see; what nobody comes back for is abandoned after the grace).
func waitNoPending(t *testing.T, r *chaosRun, db *sql.DB, deadline time.Time) {
	t.Helper()
	for {
		var n int
		err := db.QueryRow(`SELECT count(*) FROM elicitations WHERE status = 'pending'`).Scan(&n)
		if err == nil && n == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("%d prompts still pending %s after the load stopped (err %v)", n, chaosDrainTimeout, err)
			return
		}
		time.Sleep(100 * time.Millisecond) // the database pushes nothing to the test: ask again
	}
}

// waitAllLogged waits until every ended prompt has its resolved event in the durable
// log (elicitations.logged at models.LoggedResolved).
func waitAllLogged(t *testing.T, db *sql.DB, deadline time.Time) {
	t.Helper()
	for {
		var n int
		err := db.QueryRow(`SELECT count(*) FROM elicitations WHERE status <> 'pending' AND logged < $1`, models.LoggedResolved).Scan(&n)
		if err == nil && n == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("%d ended prompts still without their resolved event in the log (err %v)", n, err)
			return
		}
		time.Sleep(100 * time.Millisecond) // the database pushes nothing to the test: ask again
	}
}

// chaosRun is the shared state of one run.
type chaosRun struct {
	seed     uint64
	rs       *replicaSet
	tf       *traffic
	root     string
	sids     map[string]string // kind → the child session its agents park on
	ctx      context.Context   // cancelled when the run gives up on clients
	stopLoad chan struct{}     // closed: agents start no new request
	people   []*person
	watchers []*watcher

	codexIDs, policyN atomic.Int64

	outageStart, outageEnd time.Time
	healthDown             time.Duration
	kills                  []killed

	mu       sync.Mutex
	requests []*chaosRequest
	verdicts []*verdictAttempt
}

// killed is one SIGKILL of the run.
type killed struct {
	at  time.Time
	url string
}

// chaosRequest is one agent request followed across its re-parks.
type chaosRequest struct {
	kind, sid string
	id        string   // the prompt id (for policy ASKs: the final attempt's, found at the end)
	tags      []string // policy ASKs: one per attempt, in the command, to find the prompt
	attempts  int
	final     *testserver.Response
	finalX    exchange
	failed    string
}

func (q *chaosRequest) String() string {
	return fmt.Sprintf("%s request %s on session %s (%d attempts)", q.kind, q.id, q.sid, q.attempts)
}

// verdictAttempt is one resolve call by a person.
type verdictAttempt struct {
	person, action, reason, eid, sid string
	x                                exchange
	outcome, resolvedBy              string // from the answer; outcome "" when unknown
}

func (v *verdictAttempt) outcomeOrUnknown() string {
	if v.outcome == "" {
		return "unknown"
	}
	return v.outcome
}

// agent is one client: it sends a request of its kind, re-parks it until it has an
// answer, pauses, and goes again until the load stops.
func (r *chaosRun) agent(n int, kind string) {
	rng := rand.New(rand.NewPCG(r.seed, uint64(100+n)))
	for {
		select {
		case <-r.stopLoad:
			return
		default:
		}
		q := &chaosRequest{kind: kind, sid: r.sids[kind]}
		r.mu.Lock()
		r.requests = append(r.requests, q)
		r.mu.Unlock()
		var path string
		var body func(attempt int) any
		switch kind {
		case "claude":
			q.id = ids.New("elicit_claude_")
			b := testserver.ClaudeBody("Bash", map[string]any{"command": "echo chaos " + q.id})
			b["_gatehouse_elicitation_id"] = q.id
			path, body = "/v1/sessions/"+q.sid+"/hooks/permission-request", func(int) any { return b }
		case "codex":
			rpcID := r.codexIDs.Add(1)
			b := testserver.CodexCommandBody(rpcID, []string{"echo", "chaos", strconv.FormatInt(rpcID, 10)})
			raw, _ := json.Marshal(b)
			req, err := codex.Decode(raw)
			if err != nil {
				q.failed = "decode our own Codex body: " + err.Error()
				return
			}
			q.id = ids.Deterministic(codex.IDPrefix, req.CanonicalKey(q.sid))
			path, body = "/v1/sessions/"+q.sid+"/hooks/codex-elicitation-request", func(int) any { return b }
		case "policy":
			k := r.policyN.Add(1)
			path, body = "/v1/sessions/"+q.sid+"/policies/evaluate", func(attempt int) any {
				tag := fmt.Sprintf("[cp%d.%d]", k, attempt)
				q.tags = append(q.tags, tag)
				return map[string]any{"event": map[string]any{"type": "PHASE_TOOL_CALL", "target": "Bash",
					"data": map[string]any{"name": "Bash", "arguments": map[string]any{"command": "make chaos " + tag}}}}
			}
		}
		r.park(q, rng, path, body)
		if q.failed != "" {
			return
		}
		select { // the agent works a little before asking again
		case <-r.stopLoad:
			return
		case <-time.After(time.Duration(50+rng.IntN(250)) * time.Millisecond):
		}
	}
}

// park sends q to random replicas until one answers it: a replica that dies under it
// (transport error) or a 503 sends it to another (same id, or a new attempt for
// policy ASKs, which have no re-attach id).
func (r *chaosRun) park(q *chaosRequest, rng *rand.Rand, path string, body func(attempt int) any) {
	avoid := ""
	backoff := 50 * time.Millisecond
	for attempt := 1; ; attempt++ {
		if r.ctx.Err() != nil {
			q.failed = fmt.Sprintf("no answer before the run gave up, after %d attempts", q.attempts)
			return
		}
		base := r.rs.pick(rng, avoid)
		q.attempts = attempt
		resp, x := r.tf.send(r.ctx, base, chaosOwner, http.MethodPost, path, body(attempt))
		if x.err == nil && resp.Status < 500 {
			q.final, q.finalX = resp, x
			return
		}
		avoid = base
		wait := 20 * time.Millisecond // a dead replica: go elsewhere at once
		if x.err == nil {
			wait, backoff = backoff, min(2*backoff, time.Second) // a 503: back off
		}
		select {
		case <-r.ctx.Done():
		case <-time.After(wait):
		}
	}
}

// person watches the root session's stream and decides prompts through the resolve
// API on random replicas. Every prompt has one person who always decides it; the others
// join in at random, so verdicts race.
type person struct {
	run   *chaosRun
	name  string
	index int

	mu   sync.Mutex
	rng  *rand.Rand
	seen map[string]bool
	todo []todo
	wake chan struct{}
	sem  chan struct{}
}

type todo struct{ eid, sid string }

// consider queues a prompt seen on the stream or in the pending list (once).
func (p *person) consider(eid, sid string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if eid == "" || p.seen[eid] {
		return
	}
	p.seen[eid] = true
	p.todo = append(p.todo, todo{eid, sid})
	if p.wake == nil {
		p.wake = make(chan struct{}, 1)
	}
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// decideAll takes queued prompts and decides the ones this person decides, each after
// a think time, at most four at once.
func (p *person) decideAll(ctx context.Context) {
	p.mu.Lock()
	if p.wake == nil {
		p.wake = make(chan struct{}, 1)
	}
	wake := p.wake
	p.mu.Unlock()
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		select {
		case <-ctx.Done():
			return
		case <-wake:
		}
		p.mu.Lock()
		batch := p.todo
		p.todo = nil
		p.mu.Unlock()
		for _, td := range batch {
			h := fnv.New32a()
			h.Write([]byte(td.eid))
			p.mu.Lock()
			primary := int(h.Sum32()%uint32(len(chaosPeople))) == p.index
			join := p.rng.Float64() < 0.4
			think := time.Duration(20+p.rng.IntN(700)) * time.Millisecond
			if p.rng.IntN(10) == 0 {
				think = chaosGrace + time.Duration(p.rng.IntN(1500))*time.Millisecond // past a replica's death
			}
			action := "accept"
			if p.rng.IntN(2) == 0 {
				action = "decline"
			}
			p.mu.Unlock()
			if !primary && !join {
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				select {
				case <-ctx.Done():
					return
				case <-time.After(think): // the person reads the prompt
				}
				select {
				case <-ctx.Done():
					return
				case p.sem <- struct{}{}:
				}
				defer func() { <-p.sem }()
				p.resolve(ctx, td, action)
			}()
		}
	}
}

// resolve gives one verdict, retrying on other replicas while the outcome is unknown.
func (p *person) resolve(ctx context.Context, td todo, action string) {
	body := map[string]any{"action": action}
	reason := ""
	if action == "decline" {
		reason = fmt.Sprintf("%s declines %s", p.name, td.eid)
		body["content"] = map[string]any{"feedback": reason}
	}
	avoid := ""
	for range 30 {
		p.mu.Lock()
		base := p.run.rs.pick(p.rng, avoid)
		p.mu.Unlock()
		resp, x := p.run.tf.send(ctx, base, p.name, http.MethodPost,
			"/v1/sessions/"+td.sid+"/elicitations/"+td.eid+"/resolve", body)
		v := &verdictAttempt{person: p.name, action: action, reason: reason, eid: td.eid, sid: td.sid, x: x}
		if ctx.Err() != nil {
			// The run ended with this verdict on the wire: the server may have stored
			// it, so it is recorded with its outcome unknown.
			p.run.mu.Lock()
			p.run.verdicts = append(p.run.verdicts, v)
			p.run.mu.Unlock()
			return
		}
		if x.err == nil && resp.Status < 500 {
			var out struct {
				Outcome    string `json:"outcome"`
				ResolvedBy string `json:"resolved_by"`
			}
			_ = json.Unmarshal(resp.Body, &out)
			v.outcome, v.resolvedBy = out.Outcome, out.ResolvedBy
			if v.outcome == "" {
				v.outcome = fmt.Sprintf("status %d", resp.Status)
			}
		}
		p.run.mu.Lock()
		p.run.verdicts = append(p.run.verdicts, v)
		p.run.mu.Unlock()
		if v.outcome != "" {
			return
		}
		avoid = base
		select {
		case <-ctx.Done():
			return
		case <-time.After(100 * time.Millisecond): // retry elsewhere, or once the database is back
		}
	}
}

// sweep looks at the root's pending list every second, as a person glancing at the
// inbox would: a prompt whose request event never made it to a stream (its replica was
// killed between storing and publishing it) is still decided.
func (p *person) sweep(ctx context.Context) {
	rng := rand.New(rand.NewPCG(p.run.seed, uint64(20+p.index)))
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second):
		}
		resp, x := p.run.tf.send(ctx, p.run.rs.pick(rng, ""), p.name, http.MethodGet, "/v1/sessions/"+p.run.root, nil)
		if x.err != nil || resp.Status != http.StatusOK {
			continue
		}
		var s struct {
			Pending []requestEvent `json:"pending_elicitations"`
		}
		if json.Unmarshal(resp.Body, &s) == nil {
			for _, ev := range s.Pending {
				p.consider(ev.ElicitationID, ev.sid(p.run.root))
			}
		}
	}
}

// requestEvent is a response.elicitation_request as seen on the root.
type requestEvent struct {
	ElicitationID string `json:"elicitation_id"`
	Params        struct {
		TargetSessionID string `json:"target_session_id"`
	} `json:"params"`
}

func (e requestEvent) sid(root string) string {
	if e.Params.TargetSessionID != "" {
		return e.Params.TargetSessionID
	}
	return root
}

// watcher is a person's stream on the root session. It reconnects to another replica
// whenever its stream ends, resuming with Last-Event-ID, and checks that the sequence
// numbers it sees go up by exactly one: no gap, no repeat.
type watcher struct {
	person *person

	mu         sync.Mutex
	lastSeq    int64
	reconnects int
	problems   []string
	resolved   map[string][]int64 // eid → seqs of its resolved events
}

func (w *watcher) frame(f sseFrame) bool {
	w.mu.Lock()
	if f.seq > 0 {
		if f.seq != w.lastSeq+1 {
			w.problems = append(w.problems, fmt.Sprintf("%s: after seq %d came seq %d (%s, %s) — a gap or a repeat on resume",
				time.Now().Format("15:04:05.000"), w.lastSeq, f.seq, f.event, f.data))
		}
		w.lastSeq = max(w.lastSeq, f.seq)
	}
	w.mu.Unlock()
	var ev requestEvent
	switch f.event {
	case "response.elicitation_request":
		if json.Unmarshal([]byte(f.data), &ev) == nil {
			w.person.consider(ev.ElicitationID, ev.sid(w.person.run.root))
		}
	case "response.elicitation_resolved":
		if json.Unmarshal([]byte(f.data), &ev) == nil {
			w.mu.Lock()
			w.resolved[ev.ElicitationID] = append(w.resolved[ev.ElicitationID], f.seq)
			w.mu.Unlock()
		}
	case "session.heartbeat":
		return true
	}
	return false
}

func (w *watcher) run(ctx context.Context) {
	rng := rand.New(rand.NewPCG(w.person.run.seed, uint64(30+w.person.index)))
	path := "/v1/sessions/" + w.person.run.root + "/stream"
	for ctx.Err() == nil {
		w.mu.Lock()
		last := w.lastSeq
		w.mu.Unlock()
		_ = readStream(ctx, w.person.run.tf.hc, w.person.run.rs.pick(rng, ""), w.person.name, path, last,
			func(f sseFrame) { w.frame(f) })
		w.mu.Lock()
		w.reconnects++
		w.mu.Unlock()
		select {
		case <-ctx.Done():
		case <-time.After(50 * time.Millisecond): // reconnect, as EventSource does
		}
	}
}

// catchUp reads what the watcher missed since its last event, up to the heartbeat that
// follows the replay.
func (w *watcher) catchUp(t *testing.T, rs *replicaSet) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	sawHeartbeat := false
	err := readStream(ctx, &http.Client{}, rs.live()[0], w.person.name, "/v1/sessions/"+w.person.run.root+"/stream",
		w.lastSeq, func(f sseFrame) {
			if w.frame(f) {
				sawHeartbeat = true
				cancel()
			}
		})
	if !sawHeartbeat {
		t.Errorf("%s's final catch-up on the stream ended before its heartbeat: %v", w.person.name, err)
	}
}

// rssSampler keeps each replica slot's highest resident memory.
type rssSampler struct {
	mu      sync.Mutex
	max     map[int]int64
	samples int
}

func (s *rssSampler) run(ctx context.Context, rs *replicaSet) {
	for {
		for slot, pid := range rs.pids() {
			if b, ok := rssBytes(pid); ok {
				s.mu.Lock()
				s.max[slot] = max(s.max[slot], b)
				s.samples++
				s.mu.Unlock()
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(250 * time.Millisecond):
		}
	}
}

func (s *rssSampler) summary() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var parts []string
	for slot := range chaosReplicas {
		parts = append(parts, fmt.Sprintf("replica %d %d MiB", slot, s.max[slot]>>20))
	}
	return strings.Join(parts, ", ") + fmt.Sprintf(" (%d samples)", s.samples)
}
