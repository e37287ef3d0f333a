package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/gatehouse-dev/gatehouse/internal/app"
	"github.com/gatehouse-dev/gatehouse/internal/config"
	"github.com/gatehouse-dev/gatehouse/internal/heapfloor"
	"github.com/gatehouse-dev/gatehouse/internal/logsink"
	"github.com/gatehouse-dev/gatehouse/internal/store"
)

// newServeCmd is `gatehouse serve`, which the root command also runs.
func newServeCmd(c *cli) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "serve",
		Short:   "run the server (the default command)",
		Long:    "Runs the server. Every flag has a GATEHOUSE_* environment twin; a flag wins over its twin.",
		GroupID: groupServer,
	}
	serveOn(cmd, c, false)
	return cmd
}

// newMigrateCmd is `gatehouse migrate`: serve's settings, but it only migrates.
func newMigrateCmd(c *cli) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "migrate",
		Short:   "apply the database migrations and exit",
		Long:    "Applies the database migrations and exits. It reads serve's flags and their GATEHOUSE_* twins.",
		GroupID: groupServer,
	}
	serveOn(cmd, c, true)
	return cmd
}

// serveOn gives cmd the server's settings as flags and runs the server (or, with
// migrateOnly, the migrations) with them.
func serveOn(cmd *cobra.Command, c *cli, migrateOnly bool) {
	flags := config.AddFlags(cmd.Flags(), c.getenv)
	if cmd.Args == nil {
		cmd.Args = noArgs
	}
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		cfg, err := flags.Config()
		if err != nil {
			return usageErrorf("gatehouse: %v", err)
		}
		if migrateOnly {
			return exitCode(migrate(cmd.Context(), cfg, c.stderr))
		}
		return exitCode(serve(cmd.Context(), cfg, c.stdout, c.stderr))
	}
}

// migrate applies the migrations to cfg's database.
func migrate(ctx context.Context, cfg *config.Config, stderr io.Writer) int {
	log := newLogger(cfg.LogFormat, cfg.LogLevel, stderr)
	slog.SetDefault(log)
	st, err := store.Open(cfg.DatabaseURL)
	if err == nil {
		err = st.Migrate(ctx, log)
		st.Close()
	}
	if err != nil {
		log.Error("migrate failed", "err", err)
		return 1
	}
	log.Info("database is up to date")
	return 0
}

// serve runs the server until ctx ends, then shuts it down gracefully.
func serve(ctx context.Context, cfg *config.Config, stdout, stderr io.Writer) int {
	// Requests log without waiting for the write; every line is out before serve returns.
	sink := logsink.New(stderr)
	defer sink.Close()
	log := newLogger(cfg.LogFormat, cfg.LogLevel, sink)
	slog.SetDefault(log)
	heapfloor.Start(int64(cfg.GCMinHeapMiB) << 20)
	a, err := app.New(ctx, cfg, log)
	if err != nil {
		log.Error("start failed", "err", err)
		return 1
	}
	defer a.Close()
	if cfg.PprofAddr != "" {
		addr, err := servePprof(cfg.PprofAddr, log)
		if err != nil {
			log.Error("pprof listen failed", "addr", cfg.PprofAddr, "err", err)
			return 1
		}
		log.Info("runtime profiles", "url", "http://"+addr.String()+"/debug/pprof/")
	}
	if addr, err := a.ListenMetrics(); err != nil {
		log.Error("metrics listen failed", "addr", cfg.MetricsAddr, "err", err)
		return 1
	} else if addr != nil {
		log.Info("metrics", "url", "http://"+addr.String()+"/metrics")
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		log.Error("listen failed", "addr", cfg.Addr, "err", err)
		return 1
	}
	// The announced URL is where this process answers (the port chosen for :0, a
	// loopback host for a wildcard address); --public-url is named beside it.
	local := listenURL(ln.Addr())
	log.Info("gatehouse listening", "url", local, "addr", ln.Addr().String(), "public_url", cfg.PublicURL,
		"database", redact(cfg.DatabaseURL), "auth", cfg.Auth)
	if cfg.PublicURL != "" {
		fmt.Fprintf(stdout, "Gatehouse is running at %s  (public URL %s, inbox: %s/inbox)\n", local, cfg.PublicURL, cfg.PublicURL)
	} else {
		fmt.Fprintf(stdout, "Gatehouse is running at %s  (inbox: %s/inbox)\n", local, local)
	}
	if err := a.Serve(ctx, ln); err != nil {
		log.Error("serve failed", "err", err)
		return 1
	}
	log.Info("stopped")
	return 0
}

// newLogger is the server's log: text or json lines of level and above.
func newLogger(format string, level slog.Level, w io.Writer) *slog.Logger {
	opts := &slog.HandlerOptions{Level: level}
	if format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// listenURL is the http URL of the listener, with a wildcard host (0.0.0.0, ::)
// replaced by 127.0.0.1, which a browser on this machine can open.
func listenURL(addr net.Addr) string {
	tcp, ok := addr.(*net.TCPAddr)
	if !ok || !tcp.IP.IsUnspecified() {
		return "http://" + addr.String()
	}
	// A wildcard listener answers on loopback (Go listens dual-stack on ::).
	return "http://" + net.JoinHostPort("127.0.0.1", strconv.Itoa(tcp.Port))
}

// redact hides a password in a database URL before logging it.
func redact(u string) string {
	at := strings.LastIndex(u, "@")
	scheme := strings.Index(u, "://")
	if at < 0 || scheme < 0 {
		return u
	}
	creds := u[scheme+3 : at]
	if i := strings.Index(creds, ":"); i >= 0 {
		return u[:scheme+3] + creds[:i] + ":***" + u[at:]
	}
	return u
}
