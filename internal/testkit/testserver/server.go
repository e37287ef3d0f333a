package testserver

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/app"
	"github.com/gatehouse-dev/gatehouse/internal/config"
)

// Server is a running in-process Gatehouse.
type Server struct {
	URL string
	App *app.App
	// DatabaseURL is the database the server runs on (to restart on the same one).
	DatabaseURL string
	// MetricsURL is the base of the --metrics-addr listener ("" without the flag):
	// MetricsURL + "/metrics" is the scrape.
	MetricsURL string
	cancel     context.CancelFunc
	done       chan error
	// openapi checks every test client's /v1 traffic against the described API (nil:
	// switched off with GATEHOUSE_VALIDATE_OPENAPI=off).
	openapi *openAPIValidator
}

// TestSessionSecret is the --session-secret Start passes.
const TestSessionSecret = "ssssssssssssssssssssssssssssssss"

// Start runs the real app on a loopback port with dbURL and extra flags (as a user
// would pass them to `gatehouse serve`) and --session-secret TestSessionSecret. It
// stops when the test ends.
func Start(t testing.TB, dbURL string, flags ...string) *Server {
	t.Helper()
	return start(t, dbURL, append([]string{"--session-secret", TestSessionSecret}, flags...))
}

// StartLogged is Start with the server's log written to logw (a test reads what the
// server logs); the writer must be safe for concurrent writes.
func StartLogged(t testing.TB, dbURL string, logw io.Writer, flags ...string) *Server {
	t.Helper()
	return startLogged(t, nil, dbURL, logw, append([]string{"--session-secret", TestSessionSecret}, flags...))
}

// StartWithoutSessionSecret is Start without --session-secret, so the server uses the
// secret generated once and kept in the database (as `gatehouse serve` does when none
// is configured).
func StartWithoutSessionSecret(t testing.TB, dbURL string, flags ...string) *Server {
	t.Helper()
	return start(t, dbURL, flags)
}

// StartOn is Start on a listener the test opened, so flags can name its address
// (--public-url for --auth oidc's redirect URL).
func StartOn(t testing.TB, ln net.Listener, dbURL string, flags ...string) *Server {
	t.Helper()
	return startOn(t, ln, dbURL, append([]string{"--session-secret", TestSessionSecret}, flags...))
}

func start(t testing.TB, dbURL string, flags []string) *Server {
	t.Helper()
	return startOn(t, nil, dbURL, flags)
}

func startOn(t testing.TB, ln net.Listener, dbURL string, flags []string) *Server {
	t.Helper()
	var logw io.Writer = io.Discard
	if os.Getenv("GATEHOUSE_TEST_LOG") != "" {
		logw = os.Stderr
	}
	return startLogged(t, ln, dbURL, logw, flags)
}

func startLogged(t testing.TB, ln net.Listener, dbURL string, logw io.Writer, flags []string) *Server {
	t.Helper()
	args := append([]string{"--database-url", dbURL, "--addr", "127.0.0.1:0"}, flags...)
	cfg, err := config.Load("test", args, func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	// Every level: a test reading the log sees what any configured level would write.
	log := slog.New(slog.NewTextHandler(logw, &slog.HandlerOptions{Level: slog.LevelDebug}))
	ctx, cancel := context.WithCancel(context.Background())
	a, err := app.New(ctx, cfg, log)
	if err != nil {
		cancel()
		t.Fatalf("app: %v", err)
	}
	if ln == nil {
		if ln, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
			cancel()
			t.Fatalf("listen: %v", err)
		}
	}
	metrics, err := a.ListenMetrics()
	if err != nil {
		cancel()
		t.Fatalf("metrics listener: %v", err)
	}
	s := &Server{URL: "http://" + ln.Addr().String(), App: a, DatabaseURL: dbURL, cancel: cancel, done: make(chan error, 1),
		openapi: newOpenAPIValidator(t)}
	if metrics != nil {
		s.MetricsURL = "http://" + metrics.String()
	}
	go func() { s.done <- a.Serve(ctx, ln) }()
	t.Cleanup(s.Stop)
	return s
}

// Scrape reads the server's /metrics from its --metrics-addr listener (the server
// must have been started with that flag).
func (s *Server) Scrape(t testing.TB) string {
	t.Helper()
	if s.MetricsURL == "" {
		t.Fatal("Scrape: start the server with --metrics-addr 127.0.0.1:0")
	}
	resp, err := http.Get(s.MetricsURL + "/metrics")
	if err != nil {
		t.Fatalf("scrape /metrics: %v", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("scrape /metrics: %d %v", resp.StatusCode, err)
	}
	return string(body)
}

// Stop shuts the server down gracefully and closes its database. Safe to call twice.
func (s *Server) Stop() {
	if s.cancel == nil {
		return
	}
	s.cancel()
	s.cancel = nil
	select {
	case <-s.done:
	case <-time.After(15 * time.Second):
	}
	s.App.Close()
}
