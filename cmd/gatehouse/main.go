// Command gatehouse is the Gatehouse approval server.
//
//	gatehouse serve     run the server (default)
//	gatehouse migrate   apply database migrations and exit
//	gatehouse version   print the version (version.go)
//	gatehouse setup <agent>     print or install an agent's hook settings (setup.go)
//	gatehouse claude-settings   print a .claude/settings.json hook snippet (claude_settings.go)
//	gatehouse codex-settings    print a Codex config.toml hooks block (codex_settings.go)
//	gatehouse audit verify      recompute the audit hash chain (audit.go)
//	gatehouse hook claude|codex forward a command hook's payload to Gatehouse (hook.go)
//	gatehouse bridge opencode   gate an OpenCode server's permission requests (bridge.go)
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"github.com/gatehouse-dev/gatehouse/internal/app"
	"github.com/gatehouse-dev/gatehouse/internal/config"
	"github.com/gatehouse-dev/gatehouse/internal/store"
)

func main() {
	os.Exit(run(os.Args[1:], os.Getenv, os.Stdout, os.Stderr))
}

func run(args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	cmd := "serve"
	if len(args) > 0 && (!strings.HasPrefix(args[0], "-") || topLevel(args[0])) {
		cmd, args = args[0], args[1:]
	}
	switch cmd {
	case "serve", "migrate":
	case "claude-settings":
		return runClaudeSettings(args, getenv, stdout, stderr)
	case "codex-settings":
		return runCodexSettings(args, getenv, stdout, stderr)
	case "audit":
		return runAudit(args, getenv, stdout, stderr)
	case "hook":
		return runHook(args, getenv, os.Stdin, stdout, stderr)
	case "setup":
		return runSetup(args, getenv, stdout, stderr)
	case "bridge":
		return runBridge(args, getenv, stderr)
	case "pending":
		return runPending(args, getenv, stdout, stderr)
	case "approve":
		return runAnswer("accept", args, getenv, stdout, stderr)
	case "reject":
		return runAnswer("decline", args, getenv, stdout, stderr)
	case "version", "--version", "-version":
		fmt.Fprintln(stdout, versionLine())
		return 0
	case "help", "--help", "-help", "-h":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		fmt.Fprintf(stderr, "gatehouse: unknown command %q\n\n%s", cmd, usage)
		return 2
	}
	cfg, err := config.Load("gatehouse "+cmd, args, getenv, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0 // the flag package has printed the usage
	}
	if err != nil {
		fmt.Fprintln(stderr, "gatehouse:", err)
		return 2
	}
	log := newLogger(cfg.LogFormat, cfg.LogLevel, stderr)
	slog.SetDefault(log)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	if cmd == "migrate" {
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

// topLevel reports whether a flag-looking first argument is the program's own
// (--help, --version) rather than one of serve's flags.
func topLevel(arg string) bool {
	switch arg {
	case "-h", "-help", "--help", "-version", "--version":
		return true
	}
	return false
}
