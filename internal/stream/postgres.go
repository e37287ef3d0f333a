package stream

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/gatehouse-dev/gatehouse/internal/groupcommit"
	"github.com/gatehouse-dev/gatehouse/models"
)

// Channels Gatehouse replicas LISTEN on. The decided, grants and rules notes are sent
// by the store's own statements, with the commit of the change they announce, so the
// store names those channels from here.
const (
	pgEventsChannel = "gatehouse_events"
	// DecidedChannel is the Postgres NOTIFY channel carrying the ids of decided prompts.
	DecidedChannel = "gatehouse_decided"
	// GrantsChannel is the Postgres NOTIFY channel on which replicas tell each other
	// that someone's access changed: a grant on a tree ({"root","user"}), or — with an
	// empty root — the end of one of a person's credentials (an API token revoked, a
	// browser signed out), after which every open stream of theirs re-checks what it
	// was opened with.
	GrantsChannel = "gatehouse_grants"
	// RulesChannel is the Postgres NOTIFY channel on which a rule made or revoked is
	// announced (its id), sent by the store with the change's commit: every replica
	// drops the live rules it caches (see OnRulesChanged).
	RulesChannel = "gatehouse_rules"
)

// PostgresLog is the event log of a Postgres database, with what the many-replica bus
// needs besides (internal/store implements it).
type PostgresLog interface {
	EventLog
	// Notify sends a NOTIFY on channel, outside any transaction.
	Notify(ctx context.Context, channel, payload string) error
	// URL is the database's address; the bus opens its own LISTEN connection to it.
	URL() string
}

// Postgres is the many-replica bus. Publishing appends events to the log and sends a
// small NOTIFY (just the log ids) in the same transaction; every replica — this one
// included — LISTENs, reads those rows back and fans them out to its own subscribers.
// Decided notes wake waiters on every replica.
//
// When the listener connection is lost, notifications sent meanwhile are gone, so on
// reconnect every local waiter re-reads its row (the truth) and every local stream is
// disconnected to resume from the log with Last-Event-ID. Nothing is lost, only replayed.
type Postgres struct {
	local *Local
	st    PostgresLog
	dsn   string
	log   *slog.Logger

	mu        sync.Mutex
	onDecided func(string)
	onGrant   func(root, user string)
	onRules   func()
	ready     chan struct{}
	readyOnce sync.Once
	// listening is true while a LISTEN connection is in place (see Listening).
	listening atomic.Bool
	// group gathers publishes made at once into shared transactions.
	group groupcommit.Group[*publication]
}

// Listener timing. A connection the server closed (a restart) fails at once; one that
// went silent (a failover, a partition) is found by the ping after listenIdlePing of
// quiet. Reconnecting backs off from listenRetryMin to listenRetryMax and starts over
// once a connection was up, so the bus is back within listenRetryMax of the database.
const (
	listenConnectTimeout = 10 * time.Second
	listenIdlePing       = 10 * time.Second
	listenPingTimeout    = 5 * time.Second
	listenRetryMin       = 100 * time.Millisecond
	listenRetryMax       = 2 * time.Second
)

// NewPostgres returns a bus for st (a Postgres store). Call Run to start listening.
func NewPostgres(st PostgresLog, log *slog.Logger) *Postgres {
	p := &Postgres{local: NewLocal(), st: st, dsn: st.URL(), log: log, ready: make(chan struct{})}
	p.group = groupcommit.Group[*publication]{Run: p.appendGroup, Max: maxGroupEvents,
		Weight: func(pub *publication) int { return len(pub.events) }}
	return p
}

// Subscribe implements Bus.
func (p *Postgres) Subscribe(session string, buffer int) *Subscription {
	return p.local.Subscribe(session, buffer)
}

// SubscribeMany implements Bus.
func (p *Postgres) SubscribeMany(sessions []string, buffer int) *Subscription {
	return p.local.SubscribeMany(sessions, buffer)
}

// Count reports local subscribers.
func (p *Postgres) Count() int { return p.local.Count() }

// OnDecided implements Bus.
func (p *Postgres) OnDecided(f func(string)) {
	p.mu.Lock()
	p.onDecided = f
	p.mu.Unlock()
}

func (p *Postgres) wake(id string) {
	p.mu.Lock()
	f := p.onDecided
	p.mu.Unlock()
	if f != nil {
		f(id)
	}
}

// Publish implements Bus. Local subscribers get the events through the listener like
// everyone else, so every replica sees one order: commit order. Publishes made at once
// share a transaction and its NOTIFY (groupcommit): each holds its sessions' rows until
// its commit.
func (p *Postgres) Publish(sessions []string, events []Event) {
	p.group.Do(&publication{sessions, events})
}

// publication is one Publish's events.
type publication struct {
	sessions []string
	events   []Event
}

// maxGroupEvents bounds the events one transaction carries: its NOTIFY lists every
// event's log id, and Postgres caps a NOTIFY payload at 8,000 bytes.
const maxGroupEvents = 200

// appendGroup appends a group of publications in one transaction. When that fails,
// each is appended on its own, so one publication's trouble (its session deleted
// meanwhile) is not the others'.
func (p *Postgres) appendGroup(g []*publication) {
	if len(g) > 1 {
		var all publication
		for _, pub := range g {
			all.sessions, all.events = append(all.sessions, pub.sessions...), append(all.events, pub.events...)
		}
		if p.append(&all) == nil {
			return
		}
	}
	for _, pub := range g {
		if err := p.append(pub); err != nil {
			// A prompt's lifecycle event is logged, and announced to every replica, by
			// the repair sweep once the database takes writes again; any other event at
			// least reaches this replica's streams.
			p.log.Error("publish stream events", "err", err)
			p.local.Publish(unstaged(pub.sessions, pub.events))
		}
	}
}

// append appends pub's events to the log and NOTIFYs their ids, in one transaction.
func (p *Postgres) append(pub *publication) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := p.st.AppendEvents(ctx, toLogged(pub.sessions, pub.events), announce)
	return err
}

// PublishIn implements Bus: the caller's transaction sends the NOTIFY every replica
// (this one included) delivers the events from, at its commit.
func (p *Postgres) PublishIn(sessions []string, events []Event, write AppendFunc) error {
	_, err := write(toLogged(sessions, events), announce)
	return err
}

// announce is the NOTIFY naming logged event rows, which every replica's listener
// reads and delivers (deliver).
var announce = &models.Notice{Channel: pgEventsChannel}

// Decided implements Bus: local waiters wake at once. Other replicas hear of every
// decision from the NOTIFY the deciding statement itself sends with its commit
// (see DecidedChannel), so there is nothing more to send here.
func (p *Postgres) Decided(id string) {
	p.wake(id)
}

// grantNote is the payload of a grant-changed NOTIFY (JSON: user names may hold any
// character but NUL).
type grantNote struct {
	Root string `json:"root"`
	User string `json:"user"`
}

// GrantChanged implements Bus: a NOTIFY every replica hears, this one included (its
// own streams are told through the listener like everyone else's). If the NOTIFY
// cannot be sent, this replica's streams are still told directly.
func (p *Postgres) GrantChanged(root, user string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	payload, _ := json.Marshal(grantNote{Root: root, User: user})
	if err := p.st.Notify(ctx, GrantsChannel, string(payload)); err != nil {
		p.log.Error("notify grant change", "err", err)
		p.grantChanged(root, user)
	}
}

// OnGrantChanged implements Bus.
func (p *Postgres) OnGrantChanged(f func(root, user string)) {
	p.mu.Lock()
	p.onGrant = f
	p.mu.Unlock()
}

func (p *Postgres) grantChanged(root, user string) {
	p.mu.Lock()
	f := p.onGrant
	p.mu.Unlock()
	if f != nil {
		f(root, user)
	}
}

// OnRulesChanged registers f, run for every RulesChannel note and whenever the LISTEN
// connection is (re-)established, before Listening reports it up: notes sent while it
// was down are lost, so whatever f forgets is re-read.
func (p *Postgres) OnRulesChanged(f func()) {
	p.mu.Lock()
	p.onRules = f
	p.mu.Unlock()
}

func (p *Postgres) rulesChanged() {
	p.mu.Lock()
	f := p.onRules
	p.mu.Unlock()
	if f != nil {
		f()
	}
}

// Resume implements Bus.
func (p *Postgres) Resume(ctx context.Context, session string, after int64) ([]Event, bool, error) {
	return resume(ctx, p.st, session, after)
}

// Head implements Bus.
func (p *Postgres) Head(ctx context.Context, session string) (int64, error) {
	return p.st.CurrentSeq(ctx, session)
}

// Ready is closed once the first LISTEN is in place.
func (p *Postgres) Ready() <-chan struct{} { return p.ready }

// Listening reports whether the LISTEN connection is up. While it is down, this
// replica hears of nothing other replicas decide or publish (it catches up when the
// connection is back), so /healthz reports the replica unavailable.
func (p *Postgres) Listening() bool { return p.listening.Load() }

// Run listens until ctx ends, reconnecting with backoff after failures (a database
// restart, a failover, a killed backend).
func (p *Postgres) Run(ctx context.Context) {
	backoff := listenRetryMin
	first := true
	for ctx.Err() == nil {
		established, err := p.listen(ctx, !first)
		if ctx.Err() != nil {
			return
		}
		first = false
		if established {
			backoff = listenRetryMin
		}
		p.log.Warn("stream listener lost; reconnecting", "err", err, "in", backoff)
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, listenRetryMax)
	}
}

// listen holds one LISTEN connection until it fails; established reports whether
// LISTEN was in place at some point.
func (p *Postgres) listen(ctx context.Context, resync bool) (established bool, err error) {
	cctx, cancel := context.WithTimeout(ctx, listenConnectTimeout)
	conn, err := pgx.Connect(cctx, p.dsn)
	if err == nil {
		for _, ch := range []string{pgEventsChannel, DecidedChannel, GrantsChannel, RulesChannel} {
			if _, err = conn.Exec(cctx, "LISTEN "+ch); err != nil {
				break
			}
		}
	}
	cancel()
	if conn != nil {
		defer conn.Close(context.Background())
	}
	if err != nil {
		return false, err
	}
	// Every rule change committed from here on is heard; what was cached before may
	// have missed some.
	p.rulesChanged()
	p.listening.Store(true)
	defer p.listening.Store(false)
	if resync {
		// Notifications sent while we were away are lost: make everyone re-read.
		p.log.Info("stream listener reconnected; waiters re-read, streams resume from the log")
		p.wake("")
		p.grantChanged("", "")
		p.local.DropAll()
	}
	p.readyOnce.Do(func() { close(p.ready) })
	for {
		wctx, cancel := context.WithTimeout(ctx, listenIdlePing)
		n, err := conn.WaitForNotification(wctx)
		cancel()
		if err != nil {
			if ctx.Err() != nil || !pgconn.Timeout(err) {
				return true, err
			}
			// Quiet for a while: make sure the server is still there. A timed-out
			// wait leaves the connection usable.
			pctx, cancel := context.WithTimeout(ctx, listenPingTimeout)
			err = conn.Ping(pctx)
			cancel()
			if err != nil {
				return true, fmt.Errorf("listener ping: %w", err)
			}
			continue
		}
		switch n.Channel {
		case DecidedChannel:
			p.wake(n.Payload)
		case GrantsChannel:
			var g grantNote
			if err := json.Unmarshal([]byte(n.Payload), &g); err != nil || (g.Root == "" && g.User == "") {
				g = grantNote{} // unreadable: treat as "anything may have changed"
			}
			// An empty root with a user: one of that person's credentials ended
			// (GrantsChannel); every stream of theirs re-checks.
			p.grantChanged(g.Root, g.User)
		case RulesChannel:
			p.rulesChanged()
		case pgEventsChannel:
			if err := p.deliver(ctx, n.Payload); err != nil {
				return true, fmt.Errorf("deliver events: %w", err)
			}
		}
	}
}

// deliverRetryFor is how long deliver keeps trying to read a notification's events.
// A read fails when the pool has no connection to give for a moment — the process out
// of file descriptors, a pooled connection the database dropped — while the LISTEN
// connection is fine. Giving up at once would drop every stream on the replica, and
// they would all reconnect to a process that may be refusing connections; retrying
// keeps them open and loses nothing, because later notifications wait in the LISTEN
// connection. A database that stays away longer is a lost listener.
const deliverRetryFor = listenIdlePing

// deliver reads the logged events a notification names and fans them out locally.
//
// A replica with no subscriber reads nothing: the notification names only event ids,
// and reading them back costs both this process and the database a query for every
// batch of events any replica commits (on a replica answering tool calls by rule,
// about a twentieth of its work for events nobody here watches). Skipping them loses
// nothing: a notification arrives after its events' commit, so a subscriber registered
// since — the only one that could want them — registered after they were in the log,
// and every subscriber registers before it replays the log or promises what follows
// (a stream's heartbeat, a page's re-read of its prompt).
func (p *Postgres) deliver(ctx context.Context, payload string) error {
	if !p.local.Watched() {
		return nil
	}
	parts := strings.Split(payload, ",")
	ids := make([]int64, 0, len(parts))
	for _, s := range parts {
		id, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			continue
		}
		ids = append(ids, id)
	}
	rows, err := p.st.EventsByID(ctx, ids)
	for wait, start := listenRetryMin, time.Now(); err != nil && time.Since(start) < deliverRetryFor; wait = min(wait*2, listenRetryMax) {
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
		rows, err = p.st.EventsByID(ctx, ids)
	}
	if err != nil {
		return err
	}
	for _, r := range rows {
		p.local.Publish([]string{r.SessionID}, []Event{fromRow(r)})
	}
	return nil
}
