package main

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
)

// TestMigrateCreatesDatabaseThenIsNoOp: `gatehouse migrate` on a fresh database applies
// the migrations (creating the SQLite file and its directory) and exits 0; a second run
// applies nothing and exits 0 too.
func TestMigrateCreatesDatabaseThenIsNoOp(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		dbURL := db.NewURL(t)
		var file string
		if db.Name == "sqlite" {
			file = filepath.Join(t.TempDir(), "not", "yet", "there.db")
			dbURL = "sqlite://" + file
		}
		code, _, stderr := runCmd(t, childEnv(), "migrate", "--database-url", dbURL)
		if code != 0 {
			t.Fatalf("first migrate exit %d:\n%s", code, stderr)
		}
		if !strings.Contains(stderr, "migration applied") {
			t.Fatalf("first migrate applied nothing:\n%s", stderr)
		}
		if file != "" {
			if fi, err := os.Stat(file); err != nil || fi.Size() == 0 {
				t.Fatalf("migrate did not create %s: %v", file, err)
			}
		}
		code, _, stderr = runCmd(t, childEnv(), "migrate", "--database-url", dbURL)
		if code != 0 {
			t.Fatalf("second migrate exit %d:\n%s", code, stderr)
		}
		if strings.Contains(stderr, "migration applied") || !strings.Contains(stderr, "database is up to date") {
			t.Fatalf("second migrate was not a no-op:\n%s", stderr)
		}
	})
}

// TestVersionCommand prints the version stamped at build time.
func TestVersionCommand(t *testing.T) {
	code, stdout, stderr := runCmd(t, childEnv(), "version")
	if code != 0 || strings.TrimSpace(stdout) != "gatehouse "+testVersion {
		t.Fatalf("version: exit %d stdout %q stderr %q", code, stdout, stderr)
	}
}

// TestCommandLineErrorsExit2: an unknown command, an unknown flag or a bad setting (flag
// or environment) exits 2 with a message naming the problem, without serving.
func TestCommandLineErrorsExit2(t *testing.T) {
	db := "sqlite://" + filepath.Join(t.TempDir(), "g.db")
	cases := []struct {
		name string
		env  []string
		args []string
		want string
	}{
		{"unknown command", nil, []string{"frobnicate"}, `unknown command "frobnicate"`},
		{"unknown flag", nil, []string{"serve", "--no-such-flag"}, "unknown flag: --no-such-flag"},
		{"bad auth flag", nil, []string{"serve", "--database-url", db, "--auth", "bogus"}, `--auth: want none, header or oidc, got "bogus"`},
		{"bad duration", nil, []string{"serve", "--database-url", db, "--elicitation-timeout", "soon"}, `--elicitation-timeout: want a positive duration`},
		{"bad log format on migrate", nil, []string{"migrate", "--database-url", db, "--log-format", "xml"}, `--log-format: want text or json, got "xml"`},
		{"bad auth env", []string{"GATEHOUSE_AUTH=bogus"}, []string{"serve", "--database-url", db}, `--auth: want none, header or oidc, got "bogus"`},
		{"stray argument", nil, []string{"serve", "--database-url", db, "extra"}, `unexpected argument "extra"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runCmd(t, childEnv(tc.env...), tc.args...)
			if code != 2 {
				t.Fatalf("exit %d, want 2\nstdout: %s\nstderr: %s", code, stdout, stderr)
			}
			if !strings.Contains(stderr, tc.want) {
				t.Fatalf("stderr does not say %q:\n%s", tc.want, stderr)
			}
			if strings.Contains(stdout, runningPrefix) {
				t.Fatalf("served despite the error: %s", stdout)
			}
		})
	}
}

// TestHelpListsFlagsWithEnvTwins: `gatehouse serve -h` exits 0 and names every flag's
// environment twin, with its type.
func TestHelpListsFlagsWithEnvTwins(t *testing.T) {
	code, stdout, stderr := runCmd(t, childEnv(), "serve", "-h")
	if code != 0 {
		t.Fatalf("serve -h exit %d:\n%s", code, stderr)
	}
	for _, want := range []string{"--addr string", "GATEHOUSE_ADDR", "--database-url string", "GATEHOUSE_DATABASE_URL", "--elicitation-timeout duration"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("usage lacks %q:\n%s", want, stdout)
		}
	}
}

// TestServeReadsEnvironmentAndFlagsWin: with only environment settings the server
// starts where GATEHOUSE_ADDR says and announces that URL (not --public-url, where it
// may not answer); when flags are given too they win (an unusable GATEHOUSE_ADDR and
// GATEHOUSE_AUTH=header are overridden by --addr and --auth none).
func TestServeReadsEnvironmentAndFlagsWin(t *testing.T) {
	db := "sqlite://" + filepath.Join(t.TempDir(), "g.db")

	fromEnv := startProc(t, db, childEnv("GATEHOUSE_ADDR=127.0.0.1:0", "GATEHOUSE_DATABASE_URL="+db,
		"GATEHOUSE_PUBLIC_URL=https://gatehouse.example.com"), "serve")
	if !strings.HasPrefix(fromEnv.URL, "http://127.0.0.1:") || strings.HasSuffix(fromEnv.URL, ":0") {
		t.Fatalf("env-configured server announced %q, want the address it listens on", fromEnv.URL)
	}
	if r := fromEnv.Client().Do(t, http.MethodGet, "/healthz", nil); r.Status != http.StatusOK {
		t.Fatalf("healthz: %d %s", r.Status, r.Body)
	}
	fromEnv.Terminate(t)
	if code := fromEnv.WaitExit(t, 10*time.Second); code != 0 {
		t.Fatalf("exit %d after SIGTERM", code)
	}

	env := childEnv("GATEHOUSE_ADDR=not-an-address", "GATEHOUSE_AUTH=header", "GATEHOUSE_DATABASE_URL="+db)
	flagsWin := startProc(t, db, env, "serve", "--addr", "127.0.0.1:0", "--auth", "none")
	// In header mode this would be 401 (no identity); --auth none makes it the local user.
	if r := flagsWin.Client().Do(t, http.MethodGet, "/v1/agents", nil); r.Status != http.StatusOK {
		t.Fatalf("--auth none did not win over GATEHOUSE_AUTH=header: %d %s", r.Status, r.Body)
	}
}
