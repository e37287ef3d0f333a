// Package app wires Gatehouse's concrete parts together: config → store → bus → domain
// services → HTTP handlers. cmd/gatehouse and the end-to-end tests share it, so the
// tests run exactly the server users run.
package app

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/labstack/echo/v4"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gatehouse-dev/gatehouse/handlers"
	"github.com/gatehouse-dev/gatehouse/internal/adapters/mcp"
	"github.com/gatehouse-dev/gatehouse/internal/audit"
	"github.com/gatehouse-dev/gatehouse/internal/auth"
	"github.com/gatehouse-dev/gatehouse/internal/config"
	"github.com/gatehouse-dev/gatehouse/internal/elicit"
	"github.com/gatehouse-dev/gatehouse/internal/evaluate"
	"github.com/gatehouse-dev/gatehouse/internal/grants"
	"github.com/gatehouse-dev/gatehouse/internal/held"
	"github.com/gatehouse-dev/gatehouse/internal/history"
	"github.com/gatehouse-dev/gatehouse/internal/inbox"
	"github.com/gatehouse-dev/gatehouse/internal/mcpproxy"
	"github.com/gatehouse-dev/gatehouse/internal/mcpproxy/upstream"
	"github.com/gatehouse-dev/gatehouse/internal/metrics"
	"github.com/gatehouse-dev/gatehouse/internal/notify"
	"github.com/gatehouse-dev/gatehouse/internal/notify/slack"
	"github.com/gatehouse-dev/gatehouse/internal/park"
	"github.com/gatehouse-dev/gatehouse/internal/policy"
	"github.com/gatehouse-dev/gatehouse/internal/rules"
	"github.com/gatehouse-dev/gatehouse/internal/runner"
	"github.com/gatehouse-dev/gatehouse/internal/sessions"
	"github.com/gatehouse-dev/gatehouse/internal/store"
	"github.com/gatehouse-dev/gatehouse/internal/stream"
	"github.com/gatehouse-dev/gatehouse/internal/tokens"
	"github.com/gatehouse-dev/gatehouse/internal/waiting"
)

// App is a ready-to-serve Gatehouse.
type App struct {
	Config *config.Config
	Store  *store.Store
	Bus    stream.Bus
	Elicit *elicit.Service
	// Policies is the policy engine loaded from --policy-file; embedders may Register
	// Go policies on it before serving.
	Policies *policy.Engine
	Echo     *echo.Echo
	Log      *slog.Logger

	stopBus context.CancelFunc
	// upstreams are the upstream MCP servers' processes and connections (nil: none).
	upstreams *upstream.Pool
	// notify plans and sends notifications (its dispatcher runs while serving).
	notify *notify.Service
	// streams caps and ends the live streams; a stopping server closes them.
	streams *stream.Guard
	// held are the parked hooks taken off net/http (their answers are waited for at
	// shutdown, as net/http waits for its own requests).
	held *held.Set
	// checkpoints takes the daily signed checkpoint of the audit chain's head.
	checkpoints *audit.Checkpointer
	// metrics serves /metrics; metricsLn is --metrics-addr's listener once open.
	metrics   http.Handler
	metricsLn net.Listener
	// serving counts Serve calls still running; Close waits for them, so the database
	// never closes under one of Serve's writers (closed, set by Close under mu, refuses
	// a Serve that starts after it).
	mu      sync.Mutex
	closed  bool
	serving sync.WaitGroup
}

// New opens the database, applies migrations and builds the handlers.
func New(ctx context.Context, cfg *config.Config, log *slog.Logger) (*App, error) {
	st, err := store.Open(cfg.DatabaseURL)
	if err != nil {
		return nil, err
	}
	if err := st.Migrate(ctx, log); err != nil {
		st.Close()
		return nil, err
	}
	// Decided rows the audit chain lacks from before it existed join it now.
	if err := backfillChain(ctx, st, log); err != nil {
		st.Close()
		return nil, fmt.Errorf("audit chain backfill: %w", err)
	}
	secret, err := sessionSecret(ctx, cfg, st, log)
	if err != nil {
		st.Close()
		return nil, err
	}
	ident, err := auth.NewIdentifier(auth.Mode(cfg.Auth), cfg.AuthHeader, cfg.TrustedProxies)
	if err != nil {
		st.Close()
		return nil, err
	}
	policies, err := policy.LoadFile(cfg.PolicyFile)
	if err != nil {
		st.Close()
		return nil, err
	}
	if cfg.PolicyFile != "" {
		log.Info("policies loaded", "file", cfg.PolicyFile, "count", policies.Len())
	}
	var runnerEvents *runner.Events
	var mcpRunner mcpproxy.Runner
	if cfg.RunnerURL != "" {
		rc, err := runner.New(cfg.RunnerURL, nil)
		if err != nil {
			st.Close()
			return nil, err
		}
		mcpRunner, runnerEvents = rc, runner.NewEvents(rc, log)
	}
	var bus interface {
		stream.Bus
		Count() int
	}
	runCtx, stopBus := context.WithCancel(context.Background())
	var pg *stream.Postgres
	if st.Dialect() == store.Postgres {
		pg = stream.NewPostgres(st, log)
		go pg.Run(runCtx)
		select { // streams must not open before this replica hears notifications
		case <-pg.Ready():
		case <-time.After(10 * time.Second):
			stopBus()
			st.Close()
			return nil, errors.New("postgres LISTEN connection did not come up within 10s")
		}
		bus = pg
		// Live rules are answered from memory while this replica hears every rule
		// change (its LISTEN is up); a note, or a reconnect, drops them.
		pg.OnRulesChanged(st.DropRules)
		st.CacheRulesWhile(pg.Listening)
	} else {
		bus = stream.NewDurable(st, log)
	}
	core := elicit.New(st, bus, elicit.Options{Timeout: cfg.ElicitationTimeout, Grace: cfg.DisconnectGrace,
		MaxParkedPerPerson: cfg.MaxParkedPerPerson, Log: log})
	access := &auth.Checker{Mode: auth.Mode(cfg.Auth), Grants: st, Admins: auth.NewAdmins(cfg.Admins)}
	var signIn *auth.OIDC
	var signIns *auth.SignIns
	if auth.Mode(cfg.Auth) == auth.ModeOIDC {
		if signIn, err = auth.NewOIDC(auth.OIDCConfig{Issuer: cfg.OIDCIssuer, ClientID: cfg.OIDCClientID,
			ClientSecret: cfg.OIDCClientSecret, RedirectURL: cfg.PublicURL + auth.CallbackPath,
			AllowedDomains: cfg.OIDCAllowedDomains, AllowedEmails: cfg.OIDCAllowedEmails,
			AcceptMissingEmailVerified: cfg.OIDCAcceptMissingEmailVerified}); err != nil {
			stopBus()
			st.Close()
			return nil, err
		}
		log.Info("sign-in with OpenID Connect", "issuer", cfg.OIDCIssuer, "redirect_url", cfg.PublicURL+auth.CallbackPath)
		signIns = auth.NewSignIns(st, nil)
	}
	box := inbox.New(st, access)
	// Grant changes travel on the bus (to every replica) and end or refresh the streams
	// they concern.
	guard := stream.NewGuard(cfg.MaxStreamsPerUser)
	bus.OnGrantChanged(guard.GrantChanged)
	svc := sessions.New(st, access)
	svc.OnGrantChanged(bus.GrantChanged)
	// A revoked token ends its streams: this replica's at once, the others' through
	// the note the store sends with the revocation (Postgres).
	apiTokens := tokens.New(st, nil)
	apiTokens.OnRevoked(func(owner string) { guard.GrantChanged("", owner) })
	if signIns != nil { // and so does a sign-out, the streams its browser opened
		signIns.OnEnded(func(user string) { guard.GrantChanged("", user) })
	}
	m := metrics.New(metrics.Sources{Pending: st.CountPending, Subscribers: bus.Count, Parked: core.Parked,
		OpenStreams: guard.Open, InboxLoads: box.Loads})
	core.OnOpened(m.Opened)
	core.OnResolved(m.Decided)
	core.OnVerdictCommitted(m.VerdictCommitted)
	var run handlers.Runner
	if runnerEvents != nil {
		core.OnResolved(runnerEvents.ForwardVerdict)
		run = runnerEvents
	}
	servers, err := upstream.LoadFile(cfg.MCPServers)
	if err != nil {
		stopBus()
		st.Close()
		return nil, err
	}
	var proxy *mcpproxy.Proxy
	var pool *upstream.Pool
	var ups mcpproxy.Upstreams
	if servers != nil && len(servers.Servers) > 0 {
		pool = upstream.New(servers, upstream.Options{Log: log,
			MaxProcessesPerPerson: cfg.MaxUpstreamProcessesPerPerson,
			Elicit: func(ctx context.Context, sid, person, server, tool string, p *sdk.ElicitParams) (*sdk.ElicitResult, error) {
				return proxy.UpstreamInput(ctx, sid, person, server, tool, p)
			}})
		ups = pool
		log.Info("upstream MCP servers configured", "file", cfg.MCPServers, "count", len(servers.Servers))
	}
	ruleBook := rules.New(st, svc, access, core)
	// One park use case for every request that waits for a person — hooks, policy
	// evaluations, the MCP proxy — so one pool of slots bounds their work at once and
	// the rules are applied in one place.
	// An escalated refusal (--escalate-denials) parks here too; its approval's grant is
	// stored, so the retry may reach any replica.
	parks := park.New(core, ruleBook, park.DefaultSlots, park.RateBy(policies.Risk()), park.Escalate(park.Escalation{
		On: cfg.EscalateDenials, Wait: cfg.EscalateWait, Grants: grants.New(st, cfg.GrantTTL, nil), Policies: policies, Log: log}))
	proxy = mcpproxy.New(core, policies, mcpRunner, ups, mcp.NewStateSigner(secret), mcpproxy.Options{
		Mode: cfg.ElicitationMode, ApprovalTTL: cfg.MCPApprovalTTL, RetryWait: cfg.MCPRetryWait,
		InputTimeout: cfg.MCPInputTimeout, Log: log, Park: parks, Tasks: st,
	})
	notifier, err := newNotifier(ctx, cfg, st, core, secret, log)
	if err != nil {
		stopBus()
		st.Close()
		return nil, err
	}
	hold := &held.Set{}
	e := handlers.New(handlers.Deps{
		Sessions: svc, Elicit: core, Bus: bus, Ident: ident, Log: log,
		Ping:            func(r *http.Request) error { return health(r, st, pg) },
		MaxBodyBytes:    cfg.MaxBodyBytes,
		Metrics:         m.Handler(),
		MetricsToken:    cfg.MetricsToken,
		Runner:          run,
		Evaluate:        evaluate.New(policies, cfg.ElicitationMode == mcp.ModeURL).WithMaxWait(cfg.ElicitationTimeout),
		MCP:             proxy,
		PublicURL:       cfg.PublicURL,
		Inbox:           box,
		SessionSecret:   secret,
		Streams:         guard,
		Hosts:           hostGuard(cfg),
		BodyReadTimeout: cfg.BodyReadTimeout,
		Rules:           ruleBook,
		Park:            parks,
		Audit:           audit.New(st, access),
		History:         history.New(st, access),
		Tokens:          apiTokens,
		OIDC:            signIn,
		SignIns:         signIns,
		Notify:          notifier,
		Waiting:         waiting.New(notifier, st, waiting.DefaultEvery, nil, log),
		Slack:           slackInteractions(cfg),
		Held:            hold,
	})
	// Rule answers a crash left in the decision journal are stored before this
	// server answers anything (any replica's, on Postgres: see elicit.Replay).
	if n, err := core.Replay(ctx, 0); err != nil {
		if pool != nil {
			_ = pool.Close()
		}
		stopBus()
		st.Close()
		return nil, fmt.Errorf("store the journaled rule answers: %w", err)
	} else if n > 0 {
		log.Info("stored rule answers left in the decision journal", "count", n)
	}
	return &App{Config: cfg, Store: st, Bus: bus, Elicit: core, Policies: policies, Echo: e, Log: log, stopBus: stopBus, streams: guard,
		upstreams: pool, notify: notifier, held: hold, checkpoints: newCheckpointer(ctx, cfg, st, secret, log),
		metrics: m.Handler()}, nil
}

// orphanAge is how long a rule answer may sit in the decision journal before another
// replica takes it as left by a replica that died (elicit.Replay): far longer than a
// live replica takes to store its answers.
const orphanAge = time.Minute

// health is /healthz's check: the database answers and, on Postgres, the LISTEN
// connection is up (without it this replica misses other replicas' verdicts and events
// until it reconnects, so a load balancer should prefer another).
func health(r *http.Request, st *store.Store, pg *stream.Postgres) error {
	if err := st.Ping(r.Context()); err != nil {
		return err
	}
	if pg != nil && !pg.Listening() {
		return errors.New("stream listener is reconnecting")
	}
	return nil
}

// sessionSecretKey is the settings row holding the generated session secret.
const sessionSecretKey = "session_secret"

// sessionSecret returns the key for browser cookies, CSRF tokens, MCP requestState and
// Mcp-Session-Id: --session-secret when configured, else one generated on the first
// start and kept in the database, so a restart or another replica on the same database
// still accepts what this one signed.
func sessionSecret(ctx context.Context, cfg *config.Config, st *store.Store, log *slog.Logger) (string, error) {
	if cfg.SessionSecret != "" {
		return cfg.SessionSecret, nil
	}
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("generate session secret: %w", err)
	}
	offered := hex.EncodeToString(b[:])
	secret, err := st.EnsureSetting(ctx, sessionSecretKey, offered)
	if err != nil {
		return "", fmt.Errorf("session secret: %w", err)
	}
	if len(secret) < 32 {
		return "", fmt.Errorf("session secret in the database (settings %q) is shorter than 32 characters", sessionSecretKey)
	}
	if secret == offered {
		log.Info("no --session-secret set: generated one and kept it in the database (table settings); restarts and replicas on this database use it",
			"key", sessionSecretKey)
	} else {
		log.Info("no --session-secret set: using the one kept in the database (table settings)", "key", sessionSecretKey)
	}
	return secret, nil
}

// ListenMetrics opens --metrics-addr's listener, which Serve then serves /metrics on,
// and returns its address; nil when --metrics-addr is empty. Serve opens it itself if
// nobody did; calling this first tells the caller the port chosen for ":0".
func (a *App) ListenMetrics() (net.Addr, error) {
	if a.Config.MetricsAddr == "" {
		return nil, nil
	}
	if a.metricsLn == nil {
		ln, err := net.Listen("tcp", a.Config.MetricsAddr)
		if err != nil {
			return nil, fmt.Errorf("--metrics-addr: %w", err)
		}
		a.metricsLn = ln
	}
	return a.metricsLn.Addr(), nil
}

// serveMetrics serves /metrics alone on --metrics-addr (nil when off): a listener of
// its own, so the figures can stay on a network only the scraper reaches while the API
// faces the users. The caller shuts it down with the main server.
func (a *App) serveMetrics() (*http.Server, error) {
	if _, err := a.ListenMetrics(); err != nil || a.metricsLn == nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", a.metrics)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 120 * time.Second}
	ln := a.metricsLn
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			a.Log.Error("metrics listener stopped", "addr", ln.Addr().String(), "err", err)
		}
	}()
	return srv, nil
}

// Serve answers HTTP on ln (and /metrics on --metrics-addr) until ctx ends, then shuts
// down gracefully: parked requests get their "no verdict" answer, in-flight requests
// finish, all within 10 s; the metrics listener closes with it.
func (a *App) Serve(ctx context.Context, ln net.Listener) error {
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		return errors.New("serve: the app is closed")
	}
	a.serving.Add(1)
	a.mu.Unlock()
	defer a.serving.Done()
	metricsSrv, err := a.serveMetrics()
	if err != nil {
		return err
	}
	if metricsSrv != nil {
		defer metricsSrv.Close()
	}
	// Request contexts end only past the shutdown's deadline: until then a request
	// writing a prompt or an answer runs to its end (streams, which never end by
	// themselves, are closed through the guard instead).
	reqCtx, endRequests := context.WithCancel(context.WithoutCancel(ctx))
	defer endRequests()
	// Every request's handler runs holding handling's read lock; Serve takes the write
	// lock before it returns (below), which waits for the handlers still running, even
	// past the shutdown deadline, and holds back any that would start after them.
	var handling sync.RWMutex
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			handling.RLock()
			defer handling.RUnlock()
			a.Echo.ServeHTTP(w, r)
		}),
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       120 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return reqCtx },
	}
	if auth.Mode(a.Config.Auth) == auth.ModeNone && !auth.LoopbackListener(ln.Addr()) {
		a.Log.Warn("--auth none on a non-loopback address: everyone who can reach "+ln.Addr().String()+
			" acts as the single user and can approve anything; listen on 127.0.0.1 or use --auth header behind a proxy",
			"addr", ln.Addr().String())
	}
	// The background loops write to the database; Serve returns only once they have
	// stopped, so Close never pulls the database from under one of them (on SQLite a
	// late writer re-creates the journal files next to a database being removed).
	var loops sync.WaitGroup
	defer loops.Wait()
	loopCtx, stopLoops := context.WithCancel(ctx)
	defer stopLoops()
	loops.Go(func() { a.sweep(loopCtx) })
	loops.Go(func() { a.checkpointDaily(loopCtx) })
	loops.Go(func() { a.Elicit.RunLeases(loopCtx) })
	if a.Config.PublicURL == "" {
		// Links in notifications need an absolute base; without --public-url the
		// address this server listens on is the best guess.
		base := "http://" + ln.Addr().String()
		a.notify.SetPublicURL(base)
		a.Log.Warn("no --public-url: links in notifications point at the listen address; set --public-url to the address people reach Gatehouse at",
			"url", base)
	}
	loops.Go(func() { a.notify.Run(loopCtx) })
	errc := make(chan error, 1)
	// Out of file descriptors, the listener refuses connections at once (503) rather
	// than leave them unanswered in the backlog (shedListener).
	go func() { errc <- srv.Serve(newShedListener(ln, a.Log)) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	a.Log.Info("shutting down: answering parked requests")
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// Parked requests answer first (no verdict), so Shutdown does not wait on them.
	// Keep-alive goes off first: each parked request's "no verdict" answer then closes
	// its connection, which tells a forwarder (gatehouse hook) that the server went
	// away — it re-parks with its re-attach id — rather than that nobody decided. Held
	// requests (internal/held) always close theirs; net/http does not track them, so
	// their answers are waited for here.
	srv.SetKeepAlivesEnabled(false)
	a.Elicit.Shutdown(sctx)
	a.held.Wait(sctx)
	// Live streams close now, so they do not hold Shutdown until its deadline; their
	// clients reconnect elsewhere. Every other request finishes what it was doing.
	a.streams.Close()
	err = srv.Shutdown(sctx)
	if errors.Is(err, context.DeadlineExceeded) {
		endRequests()
		err = srv.Close() // no request starts from here on
	}
	// The database closes once Serve returns (Close): a request still running past the
	// deadline, or a held request still answering, would write to it after that — on
	// SQLite re-creating its journal files beside a database being removed. Their
	// contexts have ended, so each is a database call or two from done: wait for them.
	a.held.Wait(context.Background())
	handling.Lock() // never unlocked: this server handles no request after it
	// The rule answers given are stored before the database may close.
	a.Elicit.Settle(sctx)
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("shutdown: %w", err)
	}
	return nil
}

// hostGuard is the DNS-rebinding guard for --auth none, where no identity check stands
// between a web page the user visits and the API; nil otherwise (a proxy in front of
// --auth header decides which names reach Gatehouse).
func hostGuard(cfg *config.Config) *auth.HostGuard {
	if auth.Mode(cfg.Auth) != auth.ModeNone {
		return nil
	}
	return auth.NewHostGuard(cfg.Addr, cfg.PublicURL)
}

// sweep expires rows whose deadline passed while nobody waited (e.g. across restarts,
// or MCP approvals whose client never came back). It runs often enough that such an
// approval ends within a quarter of --mcp-approval-ttl of its deadline.
func (a *App) sweep(ctx context.Context) {
	every := min(time.Minute, max(a.Config.MCPApprovalTTL/4, 100*time.Millisecond))
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		if n, err := a.Elicit.ExpireDue(ctx); err != nil && ctx.Err() == nil {
			a.Log.Warn("expire due elicitations", "err", err)
		} else if n > 0 {
			a.Log.Info("expired stale elicitations", "count", n)
		}
		if _, err := a.Store.PruneEvents(ctx, time.Now().UTC().Add(-a.Config.EventRetention)); err != nil && ctx.Err() == nil {
			a.Log.Warn("prune stream events", "err", err)
		}
		if a.Store.Dialect() == store.Postgres { // one SQLite process holds every answer it journaled
			if n, err := a.Elicit.Replay(ctx, orphanAge); err != nil && ctx.Err() == nil {
				a.Log.Warn("store orphaned rule answers from the decision journal", "err", err)
			} else if n > 0 {
				a.Log.Info("stored orphaned rule answers from the decision journal", "count", n)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Close stops the bus listener, reaps upstream MCP servers and releases the database
// (and the metrics listener, if ListenMetrics opened it and Serve never ran). It first
// waits for a running Serve to return — its context must have ended — so the database
// never closes under a writer.
func (a *App) Close() error {
	a.mu.Lock()
	a.closed = true
	a.mu.Unlock()
	a.serving.Wait()
	settle, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	a.Elicit.Settle(settle) // answers given without Serve (tests driving the core)
	cancel()
	a.stopBus()
	if a.metricsLn != nil {
		_ = a.metricsLn.Close() // already closed when Serve ran
	}
	if a.upstreams != nil {
		if err := a.upstreams.Close(); err != nil {
			a.Log.Warn("close upstream MCP servers", "err", err)
		}
	}
	return a.Store.Close()
}

// slackInteractions reads Slack's button clicks; nil when Slack is not configured.
func slackInteractions(cfg *config.Config) *slack.Interactions {
	if cfg.SlackBotToken == "" {
		return nil
	}
	return slack.NewInteractions(cfg.SlackSigningSecret, cfg.SlackBotToken, cfg.SlackAPIURL)
}
