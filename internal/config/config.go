// Package config loads Gatehouse's settings from flags and their environment twins.
// Flags win over the environment; the result is validated and passed down explicitly,
// never kept in a global.
package config

import (
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"
)

// Config is every runtime setting.
type Config struct {
	Addr string
	// PprofAddr, when set, serves Go's runtime profiles (net/http/pprof) on a listener
	// of their own — never on Addr, where they would be open to every client.
	PprofAddr string
	// MetricsAddr, when set, serves /metrics on a listener of its own; MetricsToken,
	// when set, also serves it on Addr to callers that send it as a bearer token.
	// Neither: no /metrics at all (the figures are not for every client of the API).
	MetricsAddr        string
	MetricsToken       string
	DatabaseURL        string
	Auth               string
	AuthHeader         string
	TrustedProxies     []string
	ElicitationMode    string
	PublicURL          string
	RunnerURL          string
	PolicyFile         string
	ElicitationTimeout time.Duration
	MCPInputTimeout    time.Duration
	DisconnectGrace    time.Duration
	EventRetention     time.Duration
	// MCPApprovalTTL bounds how long an approval handed to an MCP client (input_required,
	// -32042) stays pending if the client never comes back.
	MCPApprovalTTL time.Duration
	// MCPRetryWait bounds how long an MCP client's retry waits for a pending verdict.
	MCPRetryWait time.Duration
	// MCPServers is the YAML file of upstream MCP servers ("" for none).
	MCPServers string
	// SessionSecret keys browser cookies, CSRF tokens and MCP state; "" means none was
	// configured, and the app uses one generated once and kept in the database.
	SessionSecret string
	LogFormat     string
	// LogLevel is the least level logged: successful reads are logged at debug.
	LogLevel     slog.Level
	MaxBodyBytes int64
	// MaxStreamsPerUser caps the live streams (API and page) one person holds open on
	// one replica; the next gets 429 until one closes.
	MaxStreamsPerUser int
	// MaxParkedPerPerson caps the requests one person keeps parked (waiting for a
	// verdict) on one replica; the next gets 429 until one is answered.
	MaxParkedPerPerson int
	// GCMinHeapMiB is the least heap goal (MiB) the garbage collector keeps: below it,
	// a small heap collects less often (internal/heapfloor). 0: Go's default.
	GCMinHeapMiB int
	// MaxUpstreamProcessesPerPerson caps the stdio MCP server processes one person's
	// calls keep running on one replica; the next start gets 429 until one exits.
	MaxUpstreamProcessesPerPerson int
	// BodyReadTimeout bounds how long a request body may take to arrive, so a client
	// that trickles its body (slowloris) cannot hold a connection and a goroutine.
	BodyReadTimeout time.Duration
	// OIDC* configure --auth oidc: the provider, this client and who may sign in.
	OIDCIssuer         string
	OIDCClientID       string
	OIDCClientSecret   string
	OIDCAllowedDomains []string
	OIDCAllowedEmails  []string
	// OIDCAcceptMissingEmailVerified admits ID tokens without an email_verified claim
	// (providers that never send one); off, the claim must be present and true.
	OIDCAcceptMissingEmailVerified bool
	// Admins see and manage every session (--auth header and oidc).
	Admins []string
	// NotifyAllowPrivate lets notifications go to http:// URLs and private, loopback
	// and link-local hosts (a LAN ntfy server, tests on loopback).
	NotifyAllowPrivate bool
	// NotifySendTimeout bounds one delivery attempt (a hung receiver).
	NotifySendTimeout time.Duration
	// NotifyRetryBase is the first retry's delay; each later one doubles, up to
	// NotifyRetryMax, for NotifyAttempts attempts in all.
	NotifyRetryBase time.Duration
	NotifyRetryMax  time.Duration
	NotifyAttempts  int
	// ActionLinkTTL bounds how long an action link in a notification stays usable.
	ActionLinkTTL time.Duration
	// Slack* configure the Slack app notifications are sent from (empty token: none).
	SlackBotToken      string
	SlackSigningSecret string
	// SlackAPIURL is the Slack Web API base (tests point it at a stand-in).
	SlackAPIURL string

	// EscalateDenials escalates Claude Code auto mode's refusals (its PermissionDenied
	// hook) to a person, whose approval lets the agent retry that exact call once
	// (internal/grants). Off, such a hook is answered "no retry" at once.
	EscalateDenials bool
	// EscalateWait bounds how long an escalated refusal waits for a person: the hook
	// must be answered within its own timeout (Claude Code's default is 600 s).
	EscalateWait time.Duration
	// GrantTTL is how long an approved refusal's one-shot retry grant stays usable
	// (at most grants.MaxTTL).
	GrantTTL time.Duration

	// AuditCheckpointFile, when set, is where this replica appends each daily audit
	// checkpoint it takes (internal/audit), outside the database.
	AuditCheckpointFile string
}

// MaxGrantTTL is the longest --grant-ttl: a grant is for the retry an agent makes
// right after the approval (grants.MaxTTL; config imports no domain package).
const MaxGrantTTL = 10 * time.Minute

type setting struct {
	flag, env, def, usage string
}

var settings = []setting{
	{"addr", "GATEHOUSE_ADDR", "127.0.0.1:8080", "listen address"},
	{"pprof-addr", "GATEHOUSE_PPROF_ADDR", "", "listen address for Go's runtime profiles (/debug/pprof/); empty: off. Keep it on loopback"},
	{"metrics-addr", "GATEHOUSE_METRICS_ADDR", "", "listen address for Prometheus metrics (/metrics) on a listener of their own; empty: off"},
	{"metrics-token", "GATEHOUSE_METRICS_TOKEN", "", "serve /metrics on --addr too, to requests with Authorization: Bearer <this token> (≥ 32 characters); empty: not on --addr"},
	{"database-url", "GATEHOUSE_DATABASE_URL", "sqlite://./data/gatehouse.db", "sqlite://PATH or postgres://…"},
	{"auth", "GATEHOUSE_AUTH", "none", "none (single user 'local'), header (identity from a trusted proxy) or oidc (sign-in with an OpenID Connect provider)"},
	{"auth-header", "GATEHOUSE_AUTH_HEADER", "X-Forwarded-Email", "identity header in header mode"},
	{"trusted-proxies", "GATEHOUSE_TRUSTED_PROXIES", "127.0.0.1/32,::1/128", "CIDRs allowed to assert the identity header"},
	{"elicitation-mode", "GATEHOUSE_ELICITATION_MODE", "url", "url or form: how policy prompts and MRTR results are shaped"},
	{"public-url", "GATEHOUSE_PUBLIC_URL", "", "absolute base URL for links in logs and notifications"},
	{"runner-url", "GATEHOUSE_RUNNER_URL", "", "base URL of the runner that executes MCP tools"},
	{"policy-file", "GATEHOUSE_POLICY_FILE", "", "YAML file of default policies"},
	{"audit-checkpoint-file", "GATEHOUSE_AUDIT_CHECKPOINT_FILE", "", "file the daily signed audit checkpoint is appended to (JSON lines; empty: log and GET /v1/audit/checkpoint only)"},
	{"elicitation-timeout", "GATEHOUSE_ELICITATION_TIMEOUT", "24h", "longest a parked request waits"},
	{"mcp-input-timeout", "GATEHOUSE_MCP_INPUT_TIMEOUT", "5m", "wait for an MCP server's input request"},
	{"mcp-approval-ttl", "GATEHOUSE_MCP_APPROVAL_TTL", "15m", "how long an MCP approval waits for its client to come back for it"},
	{"mcp-retry-wait", "GATEHOUSE_MCP_RETRY_WAIT", "30s", "how long an MCP retry waits for a pending approval before it is asked again"},
	{"mcp-servers", "GATEHOUSE_MCP_SERVERS", "", "YAML file of upstream MCP servers (stdio commands or streamable-HTTP URLs)"},
	{"event-retention", "GATEHOUSE_EVENT_RETENTION", "24h", "how long stream events stay replayable with Last-Event-ID"},
	{"disconnect-grace", "GATEHOUSE_DISCONNECT_GRACE", "10s", "how long a prompt stays pending after its client hung up"},
	{"session-secret", "GATEHOUSE_SESSION_SECRET", "", "key for browser cookies, CSRF and MCP state, ≥ 32 characters (empty: generated once and kept in the database)"},
	{"log-format", "GATEHOUSE_LOG_FORMAT", "text", "text or json"},
	{"log-level", "GATEHOUSE_LOG_LEVEL", "info", "the least level logged: debug (also every successful read), info, warn or error"},
	{"max-body-bytes", "GATEHOUSE_MAX_BODY_BYTES", "1048576", "largest request body accepted"},
	{"max-streams-per-user", "GATEHOUSE_MAX_STREAMS_PER_USER", "32", "live streams (API and pages) one person may hold open on this replica"},
	{"max-parked-per-person", "GATEHOUSE_MAX_PARKED_PER_PERSON", "1000", "requests (hooks, policy asks, MCP calls) one person may keep waiting for a verdict on this replica; beyond it 429"},
	{"max-upstream-processes-per-person", "GATEHOUSE_MAX_UPSTREAM_PROCESSES_PER_PERSON", "8", "stdio MCP server processes (--mcp-servers) one person's calls may keep running on this replica; beyond it 429"},
	{"gc-min-heap-mib", "GATEHOUSE_GC_MIN_HEAP_MIB", "64", "the heap (MiB) the garbage collector lets grow before it collects, however little is live; 0: Go's default (twice what is live). A GOGC in the environment turns it off"},
	{"body-read-timeout", "GATEHOUSE_BODY_READ_TIMEOUT", "30s", "longest a request body may take to arrive"},
	{"oidc-issuer", "GATEHOUSE_OIDC_ISSUER", "", "OpenID provider's issuer URL (--auth oidc)"},
	{"oidc-client-id", "GATEHOUSE_OIDC_CLIENT_ID", "", "client id registered with the provider; redirect URL: --public-url + /auth/callback"},
	{"oidc-client-secret", "GATEHOUSE_OIDC_CLIENT_SECRET", "", "client secret (empty for a public client: PKCE only)"},
	{"oidc-allowed-domains", "GATEHOUSE_OIDC_ALLOWED_DOMAINS", "", "comma list of e-mail domains who may sign in (* for any verified address)"},
	{"oidc-allowed-emails", "GATEHOUSE_OIDC_ALLOWED_EMAILS", "", "comma list of e-mail addresses who may sign in"},
	{"oidc-accept-missing-email-verified", "GATEHOUSE_OIDC_ACCEPT_MISSING_EMAIL_VERIFIED", "false", "admit an ID token that has no email_verified claim (only for a provider that never sends one and verifies every address itself); an explicit false is always refused"},
	{"admins", "GATEHOUSE_ADMINS", "", "comma list of identities who see and manage every session"},
	{"notify-allow-private", "GATEHOUSE_NOTIFY_ALLOW_PRIVATE", "false", "let webhook, ntfy and push URLs be http:// or private/loopback hosts"},
	{"notify-send-timeout", "GATEHOUSE_NOTIFY_SEND_TIMEOUT", "10s", "longest one notification delivery attempt may take"},
	{"notify-retry-base", "GATEHOUSE_NOTIFY_RETRY_BASE", "2s", "delay before a failed notification's first retry (doubling after)"},
	{"notify-retry-max", "GATEHOUSE_NOTIFY_RETRY_MAX", "10m", "longest delay between notification retries"},
	{"notify-attempts", "GATEHOUSE_NOTIFY_ATTEMPTS", "10", "attempts per notification before it is marked failed"},
	{"action-link-ttl", "GATEHOUSE_ACTION_LINK_TTL", "1h", "how long approve/reject links in notifications stay usable"},
	{"escalate-denials", "GATEHOUSE_ESCALATE_DENIALS", "false", "escalate Claude Code auto mode's refusals (PermissionDenied hook) to a person; an approval lets the agent retry exactly that call once (policies on permission_denied may narrow it)"},
	{"escalate-wait", "GATEHOUSE_ESCALATE_WAIT", "5m", "how long an escalated refusal waits for a person before the agent goes on without a retry (keep it under the hook's timeout)"},
	{"grant-ttl", "GATEHOUSE_GRANT_TTL", "5m", "how long an approved refusal's one-shot retry stays usable (at most 10m)"},
	{"slack-bot-token", "GATEHOUSE_SLACK_BOT_TOKEN", "", "Slack app bot token (xoxb-…) to send notifications as direct messages"},
	{"slack-signing-secret", "GATEHOUSE_SLACK_SIGNING_SECRET", "", "Slack app signing secret, to verify button clicks (interactivity URL: --public-url + /v1/notify/slack/interactions)"},
	{"slack-api-url", "GATEHOUSE_SLACK_API_URL", "", "Slack Web API base URL (empty: Slack's own)"},
}

// Load parses args (without the program and subcommand names) over the environment.
func Load(name string, args []string, getenv func(string) string, stderr io.Writer) (*Config, error) {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SetOutput(stderr)
	f := AddFlags(fs, getenv)
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	return f.Config()
}

// Flags are the settings registered on a command's flag set, each defaulting to its
// environment twin when that is set; Config reads them once the flags are parsed.
type Flags struct {
	vals map[string]*settingValue
}

// AddFlags registers every setting on fs. A setting's default is its environment
// twin's value when set, so a flag given on the command line wins over the
// environment, which wins over the built-in default.
func AddFlags(fs *pflag.FlagSet, getenv func(string) string) *Flags {
	f := &Flags{vals: map[string]*settingValue{}}
	for _, s := range settings {
		def := s.def
		if v := getenv(s.env); v != "" {
			def = v
		}
		v := &settingValue{s: def, kind: kindOf(s.def)}
		fl := fs.VarPF(v, s.flag, "", s.usage+" (env "+s.env+")")
		if v.kind == "bool" {
			fl.NoOptDefVal = "true" // --notify-allow-private alone turns it on
		}
		f.vals[s.flag] = v
	}
	return f
}

// Config validates the parsed settings into a Config.
func (f *Flags) Config() (*Config, error) {
	vals := f.vals
	get := func(k string) string { return strings.TrimSpace(vals[k].s) }
	c := &Config{
		Addr: get("addr"), PprofAddr: get("pprof-addr"), MetricsAddr: get("metrics-addr"), MetricsToken: get("metrics-token"), DatabaseURL: get("database-url"), Auth: get("auth"), AuthHeader: get("auth-header"),
		ElicitationMode: get("elicitation-mode"), PublicURL: strings.TrimRight(get("public-url"), "/"),
		RunnerURL: strings.TrimRight(get("runner-url"), "/"), PolicyFile: get("policy-file"), MCPServers: get("mcp-servers"),
		SessionSecret: get("session-secret"), LogFormat: get("log-format"),
	}
	if lvl := strings.ToLower(get("log-level")); lvl != "debug" && lvl != "info" && lvl != "warn" && lvl != "error" ||
		c.LogLevel.UnmarshalText([]byte(lvl)) != nil {
		return nil, fmt.Errorf("--log-level: want debug, info, warn or error, got %q", get("log-level"))
	}
	c.TrustedProxies = list(get("trusted-proxies"))
	c.AuditCheckpointFile = get("audit-checkpoint-file")
	c.OIDCIssuer, c.OIDCClientID, c.OIDCClientSecret = get("oidc-issuer"), get("oidc-client-id"), get("oidc-client-secret")
	c.OIDCAllowedDomains, c.OIDCAllowedEmails = list(get("oidc-allowed-domains")), list(get("oidc-allowed-emails"))
	c.Admins = list(strings.ToLower(get("admins")))
	var err error
	c.SlackBotToken, c.SlackSigningSecret, c.SlackAPIURL = get("slack-bot-token"), get("slack-signing-secret"), get("slack-api-url")
	if c.NotifyAllowPrivate, err = strconv.ParseBool(get("notify-allow-private")); err != nil {
		return nil, fmt.Errorf("--notify-allow-private: want true or false, got %q", get("notify-allow-private"))
	}
	if c.EscalateDenials, err = strconv.ParseBool(get("escalate-denials")); err != nil {
		return nil, fmt.Errorf("--escalate-denials: want true or false, got %q", get("escalate-denials"))
	}
	if c.OIDCAcceptMissingEmailVerified, err = strconv.ParseBool(get("oidc-accept-missing-email-verified")); err != nil {
		return nil, fmt.Errorf("--oidc-accept-missing-email-verified: want true or false, got %q", get("oidc-accept-missing-email-verified"))
	}
	if c.NotifyAttempts, err = strconv.Atoi(get("notify-attempts")); err != nil || c.NotifyAttempts < 1 || c.NotifyAttempts > 100 {
		return nil, fmt.Errorf("--notify-attempts: want a number from 1 to 100, got %q", get("notify-attempts"))
	}
	for _, d := range []struct {
		key string
		dst *time.Duration
	}{{"elicitation-timeout", &c.ElicitationTimeout}, {"mcp-input-timeout", &c.MCPInputTimeout}, {"disconnect-grace", &c.DisconnectGrace}, {"event-retention", &c.EventRetention},
		{"mcp-approval-ttl", &c.MCPApprovalTTL}, {"mcp-retry-wait", &c.MCPRetryWait}, {"body-read-timeout", &c.BodyReadTimeout},
		{"notify-send-timeout", &c.NotifySendTimeout}, {"notify-retry-base", &c.NotifyRetryBase}, {"notify-retry-max", &c.NotifyRetryMax},
		{"action-link-ttl", &c.ActionLinkTTL}, {"escalate-wait", &c.EscalateWait}, {"grant-ttl", &c.GrantTTL}} {
		if *d.dst, err = time.ParseDuration(get(d.key)); err != nil || *d.dst <= 0 {
			return nil, fmt.Errorf("--%s: want a positive duration like 30s or 24h, got %q", d.key, get(d.key))
		}
	}
	if c.GrantTTL > MaxGrantTTL {
		return nil, fmt.Errorf("--grant-ttl: a retry grant lives at most %s, got %s", MaxGrantTTL, c.GrantTTL)
	}
	if _, err := fmt.Sscan(get("max-body-bytes"), &c.MaxBodyBytes); err != nil || c.MaxBodyBytes < 1024 {
		return nil, fmt.Errorf("--max-body-bytes: want a number of bytes ≥ 1024, got %q", get("max-body-bytes"))
	}
	if c.MaxStreamsPerUser, err = strconv.Atoi(get("max-streams-per-user")); err != nil || c.MaxStreamsPerUser < 1 {
		return nil, fmt.Errorf("--max-streams-per-user: want a number ≥ 1, got %q", get("max-streams-per-user"))
	}
	for _, n := range []struct {
		key string
		dst *int
	}{{"max-parked-per-person", &c.MaxParkedPerPerson}, {"max-upstream-processes-per-person", &c.MaxUpstreamProcessesPerPerson}} {
		if *n.dst, err = strconv.Atoi(get(n.key)); err != nil || *n.dst < 1 {
			return nil, fmt.Errorf("--%s: want a number ≥ 1, got %q", n.key, get(n.key))
		}
	}
	if c.GCMinHeapMiB, err = strconv.Atoi(get("gc-min-heap-mib")); err != nil || c.GCMinHeapMiB < 0 || c.GCMinHeapMiB > 1<<20 {
		return nil, fmt.Errorf("--gc-min-heap-mib: want a number of MiB from 0 to 1048576, got %q", get("gc-min-heap-mib"))
	}
	if err := c.validate(); err != nil {
		return nil, err
	}
	return c, nil
}

// settingValue is a setting kept as text: it is parsed after all flags are read, so
// every setting is validated the same way whether it came from a flag or the
// environment (and a valid flag wins over an invalid environment value). kind is the
// type the help shows (string, duration, int or bool).
type settingValue struct {
	s, kind string
}

func (v *settingValue) String() string     { return v.s }
func (v *settingValue) Set(s string) error { v.s = s; return nil }
func (v *settingValue) Type() string       { return v.kind }

// kindOf is the type of a setting as its built-in default shows it: true or false is a
// bool, a number an int, a Go duration (24h, 30s) a duration, anything else a string.
func kindOf(def string) string {
	if def == "true" || def == "false" {
		return "bool"
	}
	if _, err := strconv.Atoi(def); err == nil {
		return "int"
	}
	if _, err := time.ParseDuration(def); err == nil {
		return "duration"
	}
	return "string"
}

// list splits a comma list, dropping blanks.
func list(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func (c *Config) validate() error {
	switch c.Auth {
	case "none", "header", "oidc":
	default:
		return fmt.Errorf("--auth: want none, header or oidc, got %q", c.Auth)
	}
	if c.Auth == "oidc" {
		if c.OIDCIssuer == "" || c.OIDCClientID == "" {
			return fmt.Errorf("--auth oidc needs --oidc-issuer and --oidc-client-id")
		}
		if u, err := url.Parse(c.OIDCIssuer); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return fmt.Errorf("--oidc-issuer: want the provider's issuer URL, such as https://accounts.google.com, got %q", c.OIDCIssuer)
		}
		if c.PublicURL == "" {
			return fmt.Errorf("--auth oidc needs --public-url: the provider sends people back to --public-url + /auth/callback")
		}
		if len(c.OIDCAllowedDomains) == 0 && len(c.OIDCAllowedEmails) == 0 {
			return fmt.Errorf("--auth oidc needs --oidc-allowed-domains or --oidc-allowed-emails (\"*\" in --oidc-allowed-domains admits every verified address)")
		}
	}
	if c.Auth == "header" && c.AuthHeader == "" {
		return fmt.Errorf("--auth-header must not be empty with --auth header")
	}
	switch c.ElicitationMode {
	case "url", "form":
	default:
		return fmt.Errorf("--elicitation-mode: want url or form, got %q", c.ElicitationMode)
	}
	switch c.LogFormat {
	case "text", "json":
	default:
		return fmt.Errorf("--log-format: want text or json, got %q", c.LogFormat)
	}
	if c.PublicURL != "" {
		u, err := url.Parse(c.PublicURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
			return fmt.Errorf("--public-url: want an absolute http(s) URL such as https://gatehouse.example.com, got %q", c.PublicURL)
		}
	}
	if c.DatabaseURL == "" {
		return fmt.Errorf("--database-url must not be empty")
	}
	if (c.SlackBotToken == "") != (c.SlackSigningSecret == "") {
		return fmt.Errorf("notifications to Slack need both --slack-bot-token and --slack-signing-secret")
	}
	if c.MetricsToken != "" && len(c.MetricsToken) < 32 {
		return fmt.Errorf("--metrics-token must be at least 32 characters")
	}
	if c.SessionSecret != "" && len(c.SessionSecret) < 32 {
		return fmt.Errorf("--session-secret must be at least 32 characters")
	}
	return nil
}
