// Package handlers is Gatehouse's HTTP layer: one route table, thin handlers (identify →
// authorize → parse → one domain call → JSON or page) and one error handler.
package handlers

import (
	"log/slog"
	"net/http"
	"strconv"
	"time"

	gsessions "github.com/gorilla/sessions"
	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"github.com/gatehouse-dev/gatehouse/internal/agents"
	"github.com/gatehouse-dev/gatehouse/internal/agents/claude"
	"github.com/gatehouse-dev/gatehouse/internal/audit"
	"github.com/gatehouse-dev/gatehouse/internal/auth"
	"github.com/gatehouse-dev/gatehouse/internal/elicit"
	"github.com/gatehouse-dev/gatehouse/internal/evaluate"
	"github.com/gatehouse-dev/gatehouse/internal/held"
	"github.com/gatehouse-dev/gatehouse/internal/history"
	"github.com/gatehouse-dev/gatehouse/internal/inbox"
	"github.com/gatehouse-dev/gatehouse/internal/markdown"
	"github.com/gatehouse-dev/gatehouse/internal/mcpproxy"
	"github.com/gatehouse-dev/gatehouse/internal/notify"
	notifyslack "github.com/gatehouse-dev/gatehouse/internal/notify/slack"
	"github.com/gatehouse-dev/gatehouse/internal/onboard"
	"github.com/gatehouse-dev/gatehouse/internal/park"
	"github.com/gatehouse-dev/gatehouse/internal/rules"
	"github.com/gatehouse-dev/gatehouse/internal/sessions"
	"github.com/gatehouse-dev/gatehouse/internal/stream"
	"github.com/gatehouse-dev/gatehouse/internal/tokens"
	"github.com/gatehouse-dev/gatehouse/internal/waiting"
	"github.com/gatehouse-dev/gatehouse/views"
)

// Deps are the collaborators the handlers call.
type Deps struct {
	Sessions *sessions.Service
	Elicit   *elicit.Service
	Bus      stream.Bus
	Ident    *auth.Identifier
	// Ping checks the database for /healthz.
	Ping         func(r *http.Request) error
	Log          *slog.Logger
	MaxBodyBytes int64
	// Runner receives interrupts for the session's runner; nil when --runner-url is
	// empty. (Verdicts on prompts it owns are forwarded by internal/app's wiring.)
	Runner Runner
	// MCP is the MCP proxy (§6.5).
	MCP *mcpproxy.Proxy
	// PublicURL is the absolute base of links (--public-url); empty: the request's own.
	PublicURL string
	// Metrics serves /metrics (Prometheus text format) on this listener to callers
	// that send MetricsToken as a bearer credential; nil, or no token: no /metrics
	// here (internal/app serves it on --metrics-addr).
	Metrics      http.Handler
	MetricsToken string
	// Evaluate is the policy-evaluation use case (§6.3).
	Evaluate *evaluate.Service
	// Inbox answers the browser pages' cross-session questions.
	Inbox *inbox.Service
	// SessionSecret keys the browser cookie (CSRF token, flash) — --session-secret.
	SessionSecret string
	// Streams caps open streams per person and ends them when grants change; nil: a
	// guard with the default cap (whose grant notes nobody delivers).
	Streams *stream.Guard
	// BodyReadTimeout bounds how long a request body may take to arrive (0: unbounded).
	BodyReadTimeout time.Duration
	// Hosts, when set (--auth none), refuses requests whose Host header is not one of
	// the server's own names (DNS rebinding).
	Hosts *auth.HostGuard
	// Rules is Gatehouse's own rules (/rules, /v1/rules); nil: no rule ever applies.
	Rules *rules.Service
	// Park is the park use case (internal/park) the hooks and policy evaluations park
	// through — the one the MCP proxy shares, so one pool of slots bounds them all.
	// Nil: one of its own over Elicit and Rules.
	Park *park.Service
	// Audit exports the audit trail (GET /v1/audit).
	Audit *audit.Service
	// History lists decided prompts (/history, GET /v1/history).
	History *history.Service
	// Tokens is personal API tokens (Authorization: Bearer, /v1/me/tokens,
	// /settings/tokens); nil: every bearer token is refused.
	Tokens *tokens.Service
	// OIDC signs people in with an OpenID Connect provider (--auth oidc); nil otherwise.
	OIDC *auth.OIDC
	// SignIns keeps the browser sign-ins of --auth oidc in the database, so signing
	// out ends them everywhere; set with OIDC.
	SignIns *auth.SignIns
	// Notify is notifications: settings, delivery status, Web Push devices and action
	// links.
	Notify *notify.Service
	// Slack reads Slack's signed button clicks; nil when Slack is not configured (the
	// interactivity route then answers 404).
	Slack *notifyslack.Interactions
	// Held, when set, takes parked hooks off net/http while they wait (internal/held);
	// the app waits on it at shutdown. Nil: they wait in their handlers.
	Held *held.Set
	// Waiting forwards an agent's notice that it waits for its person (Claude Code's
	// Notification hook) to their channels; nil: such notices are taken and dropped.
	Waiting *waiting.Service
}

// Server holds the handlers' dependencies.
type Server struct {
	sessions  *sessions.Service
	elicit    *elicit.Service
	bus       stream.Bus
	ident     *auth.Identifier
	ping      func(r *http.Request) error
	log       *slog.Logger
	runner    Runner
	evaluate  *evaluate.Service
	mcp       *mcpproxy.Proxy
	publicURL string
	inbox     *inbox.Service
	audit     *audit.Service
	history   *history.Service
	streams   *stream.Guard
	cookies   *gsessions.CookieStore
	md        *markdown.Renderer
	assets    views.Assets
	rules     *rules.Service
	tokens    *tokens.Service
	oidc      *auth.OIDC
	signIns   *auth.SignIns
	notify    *notify.Service
	slack     *notifyslack.Interactions
	held      *held.Set
	waiting   *waiting.Service
	// echo makes the detached contexts of held requests (detach).
	echo *echo.Echo
	// park is the park use case; it bounds how many requests prepare at once
	// (park.DefaultSlots, see parkHook).
	park *park.Service
	// agents are the integrations whose hooks park (internal/agents).
	agents *agents.Registry
	// onboard is the empty inbox's setup commands and test prompt.
	onboard *onboard.Service
}

// New builds the Echo app with every route.
func New(d Deps) *echo.Echo {
	s := &Server{sessions: d.Sessions, elicit: d.Elicit, bus: d.Bus, ident: d.Ident, ping: d.Ping,
		log: d.Log, runner: d.Runner, evaluate: d.Evaluate, mcp: d.MCP, publicURL: d.PublicURL,
		inbox: d.Inbox, audit: d.Audit, history: d.History, streams: d.Streams, cookies: newCookieStore(d.SessionSecret), md: markdown.New(), assets: assetURLs(),
		rules: d.Rules, tokens: d.Tokens, oidc: d.OIDC, signIns: d.SignIns, notify: d.Notify, slack: d.Slack, held: d.Held,
		waiting: d.Waiting, park: d.Park, agents: agents.Default()}
	s.onboard = &onboard.Service{Sessions: d.Sessions, Elicit: d.Elicit, Agents: s.agents}
	if s.park == nil {
		s.park = park.New(d.Elicit, d.Rules, park.DefaultSlots)
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	if s.streams == nil {
		s.streams = stream.NewGuard(0)
	}
	if s.evaluate == nil {
		s.evaluate = evaluate.New(nil, false)
	}
	e := echo.New()
	s.echo = e
	e.HideBanner = true
	e.HidePort = true
	e.HTTPErrorHandler = s.errorHandler
	e.Use(requestIDs, s.accessLog, middleware.Recover())
	if d.Hosts != nil {
		e.Use(s.checkHost(d.Hosts))
	}
	e.Use(middleware.BodyLimit(strconv.FormatInt(d.MaxBodyBytes, 10) + "B"))
	if d.BodyReadTimeout > 0 {
		e.Use(s.readBodyWithin(d.BodyReadTimeout))
	}
	e.Use(s.storableInput)
	e.Use(s.settled)

	e.GET("/healthz", s.healthz)
	if d.Metrics != nil && d.MetricsToken != "" {
		e.GET("/metrics", echo.WrapHandler(d.Metrics), metricsBearer(d.MetricsToken))
	}

	// The described API (api/openapi.yaml): readable without an identity, it holds no data.
	ref := newAPIReference(s.assets.CSS)
	e.GET("/v1/openapi.json", ref.document)
	e.GET("/api", ref.showPage, pageHeaders)

	// Slack's interactivity URL: Slack calls it, so no identity — its signature is the
	// authentication (outside the /v1 group, whose identify middleware would refuse it).
	e.POST("/v1/notify/slack/interactions", s.slackInteraction, noStore)

	v1 := e.Group("/v1", s.identify, noStore)
	v1.POST("/agents", s.createAgent)
	v1.GET("/agents", s.listAgents)
	v1.GET("/agents/:id", s.getAgent)

	v1.POST("/sessions", s.createSession)
	v1.GET("/sessions", s.listSessions)
	v1.GET("/sessions/:sid", s.getSession)
	v1.GET("/sessions/:sid/agent", s.getSessionAgent)
	v1.GET("/sessions/:sid/stream", s.streamSession)
	v1.GET("/sessions/:sid/permissions", s.listPermissions)
	v1.PUT("/sessions/:sid/permissions", s.putPermission)
	v1.DELETE("/sessions/:sid/permissions", s.deletePermission)

	v1.POST("/sessions/:sid/events", s.postEvent)
	v1.GET("/sessions/:sid/elicitations/:eid", s.getElicitation)
	v1.POST("/sessions/:sid/elicitations/:eid/resolve", s.resolveElicitation)

	// Every agent hook goes through one handler (hooks_agents.go): the session routes
	// name the agent and event, the zero-config ones take them from the URL or payload.
	v1.POST("/sessions/:sid/hooks/permission-request", s.sessionHook("claude", claude.EventPermissionRequest))
	v1.POST("/sessions/:sid/hooks/pre-tool-use", s.sessionHook("claude", claude.EventPreToolUse))
	v1.POST("/sessions/:sid/hooks/elicitation", s.sessionHook("claude", claude.EventElicitation))
	v1.POST("/sessions/:sid/hooks/codex-elicitation-request", s.sessionHook("codex-app-server", ""))
	v1.POST("/hooks/claude", s.agentRoute("claude"))
	v1.POST("/hooks/codex", s.agentRoute("codex"))
	v1.POST("/hooks/:agent", s.agentHook)
	v1.POST("/hooks/:agent/:event", s.agentHook)
	v1.POST("/sessions/:sid/policies/evaluate", s.evaluatePolicies)
	v1.POST("/sessions/:sid/mcp", s.mcpPost)
	v1.GET("/sessions/:sid/mcp", s.mcpOtherMethod)
	v1.DELETE("/sessions/:sid/mcp", s.mcpDelete)
	v1.GET("/audit", s.exportAudit)
	v1.GET("/history", s.listHistory)
	v1.GET("/audit/checkpoint", s.auditCheckpoint)

	v1.POST("/rules", s.createRule)
	v1.GET("/rules", s.listRules)
	v1.GET("/rules/:id", s.getRule)
	v1.DELETE("/rules/:id", s.revokeRule)

	v1.POST("/me/tokens", s.createToken)
	v1.GET("/me/tokens", s.listTokens)
	v1.GET("/me/stream", s.streamMine)
	v1.DELETE("/me/tokens/:id", s.revokeToken)
	v1.GET("/me/notifications", s.getNotificationSettings)
	v1.PUT("/me/notifications", s.putNotificationSettings)
	v1.GET("/sessions/:sid/elicitations/:eid/notifications", s.listDeliveries)
	v1.POST("/me/push-subscriptions", s.addPushSubscription)
	v1.DELETE("/me/push-subscriptions/:id", s.removePushSubscription)

	// Browser pages (§8): identity as for the API; errors render as pages.
	e.GET("/static/*", s.serveStatic)
	// The PWA: the service worker must be served from the root to control every page
	// (its scope is "/"); the manifest names the app and its icons.
	e.GET("/sw.js", s.serveServiceWorker)
	e.GET("/manifest.webmanifest", s.serveManifest)
	if s.oidc != nil && s.signIns == nil {
		panic("handlers: --auth oidc needs Deps.SignIns")
	}
	if s.oidc != nil { // --auth oidc: sign-in with the provider, sign-out
		signin := e.Group("/auth", pageHeaders)
		signin.GET("/signin", s.startSignIn)
		signin.GET("/callback", s.finishSignIn)
		signin.POST("/signout", s.signOut)
		signin.GET("/signedout", s.showSignedOut)
	}
	// Action links from notifications: the signed token is the credential.
	act := e.Group("/act", pageHeaders)
	act.GET("/:token", s.showAction)
	act.POST("/:token", s.useAction)
	pages := e.Group("", pageHeaders, s.identify)
	pages.GET("/", s.home)
	pages.GET("/approve/:sid/:eid", s.showApprovePage)
	pages.POST("/approve/:sid/:eid", s.postApprovePage)
	pages.GET("/approve/:sid/:eid/events", s.approveEvents)
	pages.GET("/approve/:sid/:eid/raw", s.showRawRequest)
	pages.GET("/inbox", s.showInbox)
	pages.GET("/inbox/events", s.inboxEvents)
	pages.POST("/inbox/bulk", s.answerSelected)
	pages.POST("/inbox/test-prompt", s.sendTestPrompt)
	pages.POST("/inbox/:sid/:eid", s.decideFromList)
	pages.GET("/sessions", s.showSessionsPage)
	pages.GET("/history", s.showHistoryPage)
	pages.GET("/sessions/:sid", s.showSessionPage)
	pages.GET("/sessions/:sid/events", s.sessionEvents)
	pages.GET("/rules", s.showRulesPage)
	pages.POST("/rules", s.postRulesPage)
	pages.POST("/rules/:id/revoke", s.postRevokeRule)
	pages.POST("/approve/:sid/:eid/rule", s.postApproveWithRule)
	pages.GET("/settings/tokens", s.showTokensPage)
	pages.POST("/settings/tokens", s.postTokensPage)
	pages.POST("/settings/tokens/:id/revoke", s.postRevokeToken)
	pages.GET("/settings/notifications", s.showNotificationsPage)
	pages.POST("/settings/notifications", s.postNotificationsPage)
	pages.POST("/settings/notifications/devices", s.postDevice)
	pages.POST("/settings/notifications/test", s.postTestNotification)
	pages.POST("/settings/notifications/devices/:id/remove", s.postRemoveDevice)
	return e
}

// noStore marks API answers as uncacheable: they describe live state.
func noStore(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		c.Response().Header().Set("Cache-Control", "no-store")
		return next(c)
	}
}

func (s *Server) healthz(c echo.Context) error {
	if err := s.ping(c.Request()); err != nil {
		s.log.Error("healthz: database", "err", err)
		return c.JSON(http.StatusServiceUnavailable, map[string]string{"status": "unavailable"})
	}
	return c.JSON(http.StatusOK, map[string]string{"status": "ok"})
}
