package testserver_test

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
)

// TestClusterStopStartKeepsData: the private cluster refuses connections while stopped,
// comes back on the same URL, and keeps what was committed — through a fast restart
// and through a crash.
func TestClusterStopStartKeepsData(t *testing.T) {
	cl := testserver.StartCluster(t)
	url := cl.CreateDB(t)
	db, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := db.ExecContext(ctx, "CREATE TABLE kept (v int); INSERT INTO kept VALUES (1)"); err != nil {
		t.Fatal(err)
	}

	cl.Stop(t)
	if cl.Running() {
		t.Fatal("Running after Stop")
	}
	if err := db.PingContext(ctx); err == nil {
		t.Fatal("ping succeeded while the cluster was stopped")
	}
	cl.Start(t)
	if _, err := db.ExecContext(ctx, "INSERT INTO kept VALUES (2)"); err != nil {
		t.Fatalf("insert after start: %v", err)
	}
	cl.Crash(t)
	cl.Start(t)
	var n int
	if err := db.QueryRowContext(ctx, "SELECT count(*) FROM kept").Scan(&n); err != nil || n != 2 {
		t.Fatalf("after restart and crash: %d rows, err %v; want 2", n, err)
	}
}
