package config

import (
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
)

func env(kv map[string]string) func(string) string {
	return func(k string) string { return kv[k] }
}

// TestDefaultsMatchTheSpec: with no flags and no environment, every setting has the
// default SPEC §1 documents.
func TestDefaultsMatchTheSpec(t *testing.T) {
	c, err := Load("test", nil, env(nil), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	checks := map[string][2]any{
		"addr":                 {c.Addr, "127.0.0.1:8080"},
		"database-url":         {c.DatabaseURL, "sqlite://./data/gatehouse.db"},
		"auth":                 {c.Auth, "none"},
		"auth-header":          {c.AuthHeader, "X-Forwarded-Email"},
		"trusted-proxies":      {strings.Join(c.TrustedProxies, ","), "127.0.0.1/32,::1/128"},
		"elicitation-mode":     {c.ElicitationMode, "url"},
		"public-url":           {c.PublicURL, ""},
		"runner-url":           {c.RunnerURL, ""},
		"policy-file":          {c.PolicyFile, ""},
		"elicitation-timeout":  {c.ElicitationTimeout, 24 * time.Hour},
		"mcp-input-timeout":    {c.MCPInputTimeout, 5 * time.Minute},
		"disconnect-grace":     {c.DisconnectGrace, 10 * time.Second},
		"event-retention":      {c.EventRetention, 24 * time.Hour},
		"log-format":           {c.LogFormat, "text"},
		"max-body-bytes":       {c.MaxBodyBytes, int64(1 << 20)},
		"max-streams-per-user": {c.MaxStreamsPerUser, 32},
	}
	for name, got := range checks {
		if got[0] != got[1] {
			t.Errorf("--%s default = %v, want %v", name, got[0], got[1])
		}
	}
	if c.SessionSecret != "" {
		// The app, not the config, makes one up: it keeps it in the database.
		t.Errorf("no session secret configured: want none, got %q", c.SessionSecret)
	}
}

// TestEnvironmentTwinsAreHonoured: each GATEHOUSE_* variable sets its setting.
func TestEnvironmentTwinsAreHonoured(t *testing.T) {
	c, err := Load("test", nil, env(map[string]string{
		"GATEHOUSE_ADDR":                 "0.0.0.0:9999",
		"GATEHOUSE_DATABASE_URL":         "postgres://u@db/gh",
		"GATEHOUSE_AUTH":                 "header",
		"GATEHOUSE_AUTH_HEADER":          "X-Auth-Request-Email",
		"GATEHOUSE_TRUSTED_PROXIES":      "10.0.0.0/8, 192.168.0.0/16",
		"GATEHOUSE_ELICITATION_MODE":     "form",
		"GATEHOUSE_PUBLIC_URL":           "https://gate.example.com/",
		"GATEHOUSE_RUNNER_URL":           "http://runner:7000/",
		"GATEHOUSE_POLICY_FILE":          "/etc/gatehouse/policies.yaml",
		"GATEHOUSE_ELICITATION_TIMEOUT":  "1h",
		"GATEHOUSE_MCP_INPUT_TIMEOUT":    "30s",
		"GATEHOUSE_DISCONNECT_GRACE":     "2s",
		"GATEHOUSE_EVENT_RETENTION":      "2h",
		"GATEHOUSE_SESSION_SECRET":       strings.Repeat("x", 40),
		"GATEHOUSE_LOG_FORMAT":           "json",
		"GATEHOUSE_MAX_BODY_BYTES":       "4096",
		"GATEHOUSE_MAX_STREAMS_PER_USER": "5",
	}), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	checks := map[string][2]any{
		"addr":                 {c.Addr, "0.0.0.0:9999"},
		"database-url":         {c.DatabaseURL, "postgres://u@db/gh"},
		"auth":                 {c.Auth, "header"},
		"auth-header":          {c.AuthHeader, "X-Auth-Request-Email"},
		"trusted-proxies":      {strings.Join(c.TrustedProxies, ","), "10.0.0.0/8,192.168.0.0/16"},
		"elicitation-mode":     {c.ElicitationMode, "form"},
		"public-url":           {c.PublicURL, "https://gate.example.com"},
		"runner-url":           {c.RunnerURL, "http://runner:7000"},
		"policy-file":          {c.PolicyFile, "/etc/gatehouse/policies.yaml"},
		"elicitation-timeout":  {c.ElicitationTimeout, time.Hour},
		"mcp-input-timeout":    {c.MCPInputTimeout, 30 * time.Second},
		"disconnect-grace":     {c.DisconnectGrace, 2 * time.Second},
		"event-retention":      {c.EventRetention, 2 * time.Hour},
		"session-secret":       {c.SessionSecret, strings.Repeat("x", 40)},
		"log-format":           {c.LogFormat, "json"},
		"max-body-bytes":       {c.MaxBodyBytes, int64(4096)},
		"max-streams-per-user": {c.MaxStreamsPerUser, 5},
	}
	for name, got := range checks {
		if got[0] != got[1] {
			t.Errorf("%s from env = %v, want %v", name, got[0], got[1])
		}
	}
}

// TestFlagsWinOverEnvironment: a flag beats its environment twin, including when the
// environment value alone would be invalid.
func TestFlagsWinOverEnvironment(t *testing.T) {
	c, err := Load("test", []string{"--addr", "127.0.0.1:7777", "--auth", "none", "--elicitation-timeout", "90s"},
		env(map[string]string{
			"GATEHOUSE_ADDR":                "0.0.0.0:1",
			"GATEHOUSE_AUTH":                "bogus",
			"GATEHOUSE_ELICITATION_TIMEOUT": "never",
		}), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.Addr != "127.0.0.1:7777" || c.Auth != "none" || c.ElicitationTimeout != 90*time.Second {
		t.Fatalf("flags did not win: addr %q auth %q timeout %s", c.Addr, c.Auth, c.ElicitationTimeout)
	}
}

// TestInvalidSettingsAreRefused: bad values, from a flag or the environment, are an
// error naming the flag.
func TestInvalidSettingsAreRefused(t *testing.T) {
	cases := []struct {
		args []string
		env  map[string]string
		want string
	}{
		{[]string{"--auth", "bogus"}, nil, "--auth"},
		{nil, map[string]string{"GATEHOUSE_AUTH": "bogus"}, "--auth"},
		{[]string{"--elicitation-mode", "popup"}, nil, "--elicitation-mode"},
		{[]string{"--log-format", "xml"}, nil, "--log-format"},
		{[]string{"--log-level", "verbose"}, nil, "--log-level"},
		{[]string{"--log-level", "info+2"}, nil, "--log-level"},
		{[]string{"--elicitation-timeout", "0s"}, nil, "--elicitation-timeout"},
		{[]string{"--disconnect-grace", "-1s"}, nil, "--disconnect-grace"},
		{[]string{"--mcp-input-timeout", "soon"}, nil, "--mcp-input-timeout"},
		{[]string{"--max-body-bytes", "12"}, nil, "--max-body-bytes"},
		{[]string{"--max-streams-per-user", "0"}, nil, "--max-streams-per-user"},
		{nil, map[string]string{"GATEHOUSE_MAX_STREAMS_PER_USER": "lots"}, "--max-streams-per-user"},
		{[]string{"--session-secret", "short"}, nil, "--session-secret"},
		{[]string{"--database-url", " "}, nil, "--database-url"},
		{[]string{"--auth", "header", "--auth-header", ""}, nil, "--auth-header"},
		{[]string{"stray"}, nil, "unexpected argument"},
	}
	for _, tc := range cases {
		_, err := Load("test", tc.args, env(tc.env), io.Discard)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Load(%v, env %v) = %v, want an error about %s", tc.args, tc.env, err, tc.want)
		}
	}
}

// TestAuditCheckpointFile: --audit-checkpoint-file is off by default and set by the
// flag or GATEHOUSE_AUDIT_CHECKPOINT_FILE.
func TestAuditCheckpointFile(t *testing.T) {
	for _, tc := range []struct {
		args []string
		env  map[string]string
		want string
	}{
		{nil, nil, ""},
		{nil, map[string]string{"GATEHOUSE_AUDIT_CHECKPOINT_FILE": "/var/log/gatehouse/checkpoints.jsonl"}, "/var/log/gatehouse/checkpoints.jsonl"},
		{[]string{"--audit-checkpoint-file", "/srv/cp.jsonl"}, map[string]string{"GATEHOUSE_AUDIT_CHECKPOINT_FILE": "/x"}, "/srv/cp.jsonl"},
	} {
		c, err := Load("test", tc.args, env(tc.env), io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		if c.AuditCheckpointFile != tc.want {
			t.Errorf("%v %v: %q, want %q", tc.args, tc.env, c.AuditCheckpointFile, tc.want)
		}
	}
}

// TestOIDCAcceptMissingEmailVerified: off by default; the flag or its environment twin
// turns it on; anything but a boolean is refused.
func TestOIDCAcceptMissingEmailVerified(t *testing.T) {
	c, err := Load("test", nil, env(nil), io.Discard)
	if err != nil || c.OIDCAcceptMissingEmailVerified {
		t.Fatalf("default: %v, err %v; want off", c != nil && c.OIDCAcceptMissingEmailVerified, err)
	}
	for _, on := range []struct {
		args []string
		env  map[string]string
	}{
		{[]string{"--oidc-accept-missing-email-verified"}, nil},
		{nil, map[string]string{"GATEHOUSE_OIDC_ACCEPT_MISSING_EMAIL_VERIFIED": "true"}},
	} {
		if c, err := Load("test", on.args, env(on.env), io.Discard); err != nil || !c.OIDCAcceptMissingEmailVerified {
			t.Errorf("Load(%v, env %v): err %v; want on", on.args, on.env, err)
		}
	}
	if _, err := Load("test", []string{"--oidc-accept-missing-email-verified=maybe"}, env(nil), io.Discard); err == nil ||
		!strings.Contains(err.Error(), "--oidc-accept-missing-email-verified") {
		t.Errorf("a non-boolean value: %v, want an error naming the flag", err)
	}
}

// TestPerPersonLimits: --max-parked-per-person and --max-upstream-processes-per-person
// default to 1000 and 8 (SPEC §12), are set by flag or environment, and refuse
// anything but a number ≥ 1.
func TestPerPersonLimits(t *testing.T) {
	c, err := Load("test", nil, env(nil), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.MaxParkedPerPerson != 1000 || c.MaxUpstreamProcessesPerPerson != 8 {
		t.Errorf("defaults: parked %d, processes %d; want 1000 and 8", c.MaxParkedPerPerson, c.MaxUpstreamProcessesPerPerson)
	}
	c, err = Load("test", nil, env(map[string]string{
		"GATEHOUSE_MAX_PARKED_PER_PERSON":             "3",
		"GATEHOUSE_MAX_UPSTREAM_PROCESSES_PER_PERSON": "2",
	}), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.MaxParkedPerPerson != 3 || c.MaxUpstreamProcessesPerPerson != 2 {
		t.Errorf("from env: parked %d, processes %d; want 3 and 2", c.MaxParkedPerPerson, c.MaxUpstreamProcessesPerPerson)
	}
	c, err = Load("test", []string{"--max-parked-per-person", "5", "--max-upstream-processes-per-person", "1"},
		env(map[string]string{"GATEHOUSE_MAX_PARKED_PER_PERSON": "nope"}), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.MaxParkedPerPerson != 5 || c.MaxUpstreamProcessesPerPerson != 1 {
		t.Errorf("from flags: parked %d, processes %d; want 5 and 1", c.MaxParkedPerPerson, c.MaxUpstreamProcessesPerPerson)
	}
	for _, tc := range []struct {
		args []string
		env  map[string]string
		want string
	}{
		{[]string{"--max-parked-per-person", "0"}, nil, "--max-parked-per-person"},
		{nil, map[string]string{"GATEHOUSE_MAX_PARKED_PER_PERSON": "lots"}, "--max-parked-per-person"},
		{[]string{"--max-upstream-processes-per-person", "-1"}, nil, "--max-upstream-processes-per-person"},
		{nil, map[string]string{"GATEHOUSE_MAX_UPSTREAM_PROCESSES_PER_PERSON": "1.5"}, "--max-upstream-processes-per-person"},
	} {
		if _, err := Load("test", tc.args, env(tc.env), io.Discard); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Load(%v, env %v) = %v, want an error about %s", tc.args, tc.env, err, tc.want)
		}
	}
}

// TestMetricsListenerAndToken: /metrics is off unless --metrics-addr or --metrics-token
// (or their environment twins) name where and to whom; a short token is refused.
func TestMetricsListenerAndToken(t *testing.T) {
	c, err := Load("test", nil, env(nil), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.MetricsAddr != "" || c.MetricsToken != "" {
		t.Fatalf("metrics default to addr %q token %q, want both off", c.MetricsAddr, c.MetricsToken)
	}
	token := strings.Repeat("m", 32)
	c, err = Load("test", nil, env(map[string]string{"GATEHOUSE_METRICS_ADDR": "127.0.0.1:9090", "GATEHOUSE_METRICS_TOKEN": token}), io.Discard)
	if err != nil || c.MetricsAddr != "127.0.0.1:9090" || c.MetricsToken != token {
		t.Fatalf("from env: %v, addr %q token %q", err, c.MetricsAddr, c.MetricsToken)
	}
	c, err = Load("test", []string{"--metrics-addr", "127.0.0.1:0"}, env(map[string]string{"GATEHOUSE_METRICS_ADDR": "127.0.0.1:9090"}), io.Discard)
	if err != nil || c.MetricsAddr != "127.0.0.1:0" {
		t.Fatalf("flag over env: %v, addr %q", err, c.MetricsAddr)
	}
	if _, err := Load("test", []string{"--metrics-token", "short"}, env(nil), io.Discard); err == nil || !strings.Contains(err.Error(), "--metrics-token") {
		t.Fatalf("a short --metrics-token: %v, want an error naming it", err)
	}
}

// TestLogLevel: the default logs from info; --log-level (or its variable) chooses the
// least level, in any case.
func TestLogLevel(t *testing.T) {
	for _, c := range []struct {
		args []string
		env  string
		want slog.Level
	}{
		{nil, "", slog.LevelInfo},
		{[]string{"--log-level", "debug"}, "", slog.LevelDebug},
		{nil, "WARN", slog.LevelWarn},
		{[]string{"--log-level", "error"}, "debug", slog.LevelError},
	} {
		cfg, err := Load("gatehouse", c.args, func(k string) string {
			if k == "GATEHOUSE_LOG_LEVEL" {
				return c.env
			}
			return ""
		}, io.Discard)
		if err != nil || cfg.LogLevel != c.want {
			t.Errorf("%v env %q: level %v (%v), want %v", c.args, c.env, cfg.LogLevel, err, c.want)
		}
	}
}

// TestHelpShowsEachSettingsType: the flag help names each setting's type (string,
// duration, int; nothing for a bool), never pflag's "value" placeholder, and keeps the
// environment twin beside it.
func TestHelpShowsEachSettingsType(t *testing.T) {
	fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
	AddFlags(fs, env(nil))
	help := fs.FlagUsages()
	for _, want := range []string{
		"--addr string", "--elicitation-timeout duration", "--notify-attempts int", "--max-body-bytes int",
		"--oidc-accept-missing-email-verified ", "(env GATEHOUSE_ELICITATION_TIMEOUT)",
	} {
		if !strings.Contains(help, want) {
			t.Errorf("help lacks %q:\n%s", want, help)
		}
	}
	if strings.Contains(help, " value ") || strings.Contains(help, "-verified bool") {
		t.Errorf("help shows a placeholder type:\n%s", help)
	}
}
