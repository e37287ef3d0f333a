// Package testserver starts real Gatehouse servers for end-to-end tests: the real app
// over real HTTP on loopback, on a real SQLite file or a fresh Postgres database.
package testserver

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver for creating test databases

	"github.com/gatehouse-dev/gatehouse/internal/ids"
)

// PostgresEnv names the variable holding the Postgres URL tests create databases under.
const PostgresEnv = "GATEHOUSE_TEST_DATABASE_URL"

// RequirePostgresEnv, when set (CI sets it), turns a missing Postgres into a failure
// instead of a skip.
const RequirePostgresEnv = "GATEHOUSE_REQUIRE_POSTGRES"

// DB is one database flavour a test runs on.
type DB struct {
	Name string // "sqlite" or "postgres"
	// NewURL returns the URL of a fresh, empty database.
	NewURL func(t testing.TB) string
}

// Databases returns the flavours to run on: SQLite always, Postgres when configured.
func Databases(t testing.TB) []DB {
	dbs := []DB{{Name: "sqlite", NewURL: sqliteURL}}
	if os.Getenv(PostgresEnv) != "" {
		dbs = append(dbs, DB{Name: "postgres", NewURL: postgresURL})
	} else if os.Getenv(RequirePostgresEnv) != "" {
		t.Fatalf("%s is set but %s is empty: the Postgres run is mandatory here", RequirePostgresEnv, PostgresEnv)
	}
	return dbs
}

// EachDB runs f as a subtest per database flavour.
func EachDB(t *testing.T, f func(t *testing.T, db DB)) {
	t.Helper()
	for _, db := range Databases(t) {
		t.Run(db.Name, func(t *testing.T) { f(t, db) })
	}
}

func sqliteURL(t testing.TB) string {
	return "sqlite://" + filepath.Join(t.TempDir(), "gatehouse.db")
}

// postgresURL creates a fresh database next to the configured one and drops it when the
// test ends.
func postgresURL(t testing.TB) string {
	base := os.Getenv(PostgresEnv)
	if base == "" {
		t.Skipf("set %s to run on Postgres", PostgresEnv)
	}
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("parse %s: %v", PostgresEnv, err)
	}
	parent := strings.TrimPrefix(u.Path, "/")
	name := strings.ToLower(fmt.Sprintf("%s_%s", parent, strings.TrimPrefix(ids.New(""), "")[:12]))
	admin, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatalf("open postgres: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		admin.Close()
		t.Fatalf("create database %s: %v", name, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := admin.ExecContext(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			t.Logf("drop database %s: %v", name, err)
		}
		admin.Close()
	})
	u.Path = "/" + name
	return u.String()
}

// PostgresDB returns the Postgres flavour, skipping the test when Postgres is not
// configured (failing instead when GATEHOUSE_REQUIRE_POSTGRES is set).
func PostgresDB(t testing.TB) DB {
	t.Helper()
	for _, db := range Databases(t) {
		if db.Name == "postgres" {
			return db
		}
	}
	t.Skipf("set %s to run the Postgres-only tests", PostgresEnv)
	return DB{}
}
