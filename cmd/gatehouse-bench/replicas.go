package main

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"strings"
	"time"
)

// replicasDB is the table's database column for the many-replica rows: they have a
// "targets" line of their own.
const replicasDB = "postgres ×3"

// replicaNames name the three replicas in the rows; each one's database URL carries
// its name as application_name, so pg_stat_activity tells their connections apart.
var replicaNames = [3]string{"A", "B", "C"}

// replicaOptions are the sizes of the many-replica measurement.
type replicaOptions struct {
	Rounds int // park on C → verdict on A rounds
	Same   int // park on C → verdict on C rounds, interleaved: the one-replica baseline
	Burst  int // requests parked at once, spread over the three
}

// runReplicas starts three Gatehouse servers on one fresh Postgres database and
// measures what crossing replicas costs: a verdict given on A waking a request parked
// on C, the prompt reaching a stream on B, the connections the three hold, what one
// database carries for them (a burst of parks and verdicts), what each prompt leaves
// in it, and the NOTIFY rate at which the replicas' listeners fall behind. There are
// no SPEC targets for these, so the rows are figures, except that a request that is
// never woken, or answered wrongly, is a miss.
func runReplicas(t *table, bin, pgAdmin string, o replicaOptions) {
	base, cleanup, err := freshPostgres(pgAdmin)
	if err != nil {
		t.note(replicasDB, "skipped: "+err.Error())
		return
	}
	defer cleanup()
	var reps [3]*proc
	for i, name := range replicaNames {
		// One after another: the first applies the migrations.
		srv, _, err := startGatehouse(bin, withAppName(base, "gatehouse-"+name), 0)
		if err != nil {
			t.note(replicasDB, "replica "+name+" did not start: "+err.Error())
			return
		}
		defer srv.stop()
		reps[i] = srv
	}
	db, err := sql.Open("pgx", withAppName(base, benchAppName))
	if err != nil {
		t.note(replicasDB, err.Error())
		return
	}
	defer db.Close()
	hc := newHTTP(64)
	defer hc.CloseIdleConnections()
	sid, err := newSession(hc, reps[0].URL)
	if err != nil {
		t.note(replicasDB, "session: "+err.Error())
		return
	}

	r, err := replicaRounds(reps, sid, o.Rounds, o.Same)
	if err != nil {
		t.note(replicasDB, "rounds: "+err.Error())
		return
	}
	roundRows(t, r)
	rest, err := pgConnections(db)
	if err != nil {
		t.note(replicasDB, "connections: "+err.Error())
	} else {
		t.row(replicasDB, "Postgres connections held, after the rounds", rest.String(), "—", "—", "—")
	}

	// The same burst on A alone first, then over the three: what replicas add when
	// they share one database.
	one, err := replicaBurst(reps[:1], reps[0], db, sid, o.Burst)
	if err != nil {
		t.note(replicasDB, "burst on A alone: "+err.Error())
	} else if b, err := replicaBurst(reps[:], reps[1], db, sid, o.Burst); err != nil {
		t.note(replicasDB, "burst: "+err.Error())
	} else {
		burstRows(t, b, one)
	}
	g, err := logGrowth(db)
	if err != nil {
		t.note(replicasDB, "database growth: "+err.Error())
	} else {
		growthRows(t, g)
	}

	// A session of its own: the ramp's made-up events must not meet the prompts'.
	rsid, err := newSession(hc, reps[0].URL)
	if err != nil {
		t.note(replicasDB, "NOTIFY ramp: session: "+err.Error())
		return
	}
	steps, err := notifyRamp(reps, db, rsid)
	if err != nil {
		t.note(replicasDB, "NOTIFY ramp: "+err.Error())
		return
	}
	rampRows(t, steps)
}

// benchAppName is the application_name of the bench's own connections, which the
// connection counts leave out.
const benchAppName = "gatehouse-bench"

// withAppName sets application_name on a Postgres URL.
func withAppName(raw, name string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	q := u.Query()
	q.Set("application_name", name)
	u.RawQuery = q.Encode()
	return u.String()
}

// connCount is the connections the replicas hold on the bench's database, by replica.
type connCount struct {
	Total, Listening int
	By               map[string]int // application_name → connections
}

func (c connCount) String() string {
	parts := make([]string, 0, len(replicaNames))
	for _, n := range replicaNames {
		parts = append(parts, fmt.Sprintf("%s %d", n, c.By["gatehouse-"+n]))
	}
	s := fmt.Sprintf("%d (%s", c.Total, strings.Join(parts, ", "))
	if other := c.Total - c.By["gatehouse-A"] - c.By["gatehouse-B"] - c.By["gatehouse-C"]; other > 0 {
		s += fmt.Sprintf(", unnamed %d", other)
	}
	return s + fmt.Sprintf("; %d of them LISTEN)", c.Listening)
}

// pgConnections counts the client connections on the bench's database from
// pg_stat_activity, without the bench's own. A listener is a connection whose last
// statement was a LISTEN (its ping on a quiet connection would hide it, but the
// bench's streams keep it busy).
func pgConnections(db *sql.DB) (connCount, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	rows, err := db.QueryContext(ctx, `SELECT application_name, count(*), count(*) FILTER (WHERE query LIKE 'LISTEN%')
		FROM pg_stat_activity WHERE datname = current_database() AND backend_type = 'client backend'
		AND application_name <> $1 GROUP BY application_name`, benchAppName)
	if err != nil {
		return connCount{}, err
	}
	defer rows.Close()
	c := connCount{By: map[string]int{}}
	for rows.Next() {
		var name string
		var n, listening int
		if err := rows.Scan(&name, &n, &listening); err != nil {
			return connCount{}, err
		}
		c.By[name] += n
		c.Total += n
		c.Listening += listening
	}
	return c, rows.Err()
}
