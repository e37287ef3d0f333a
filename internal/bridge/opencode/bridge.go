// Package opencode is the use case of `gatehouse bridge opencode`: it puts OpenCode's
// permission requests in front of a person at Gatehouse and answers them in OpenCode.
//
// OpenCode (`opencode serve`) publishes a permission.asked event on its event stream
// and waits, without limit, until someone posts a reply. The bridge subscribes to that
// stream; for each request it parks the event's properties at Gatehouse's
// POST /v1/hooks/opencode (one goroutine per request, through hookclient.Forward, which
// re-attaches after a dropped connection) and posts the verdict to OpenCode's
// POST /permission/:id/reply. A request answered elsewhere (in OpenCode's own UI) has
// its wait cancelled and its prompt withdrawn. After every (re)connect the bridge lists
// the pending requests and parks those it is not already waiting on; the prompt id is
// derived from OpenCode's request id, so a restarted bridge re-attaches to the same
// prompt instead of asking twice.
package opencode

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/agents"
	"github.com/gatehouse-dev/gatehouse/internal/hookclient"
	"github.com/gatehouse-dev/gatehouse/internal/ids"
)

// AgentName is the registry agent the bridge parks requests as.
const AgentName = "opencode"

// Event types of OpenCode's stream the bridge acts on.
const (
	eventAsked   = "permission.asked"
	eventReplied = "permission.replied"
)

// promptPrefix starts every prompt id the bridge asks for (ids.ValidReattach).
const promptPrefix = "elicit_opencode_"

// maxSessionDepth bounds the walk from a sub-agent's session up to its top-level one.
const maxSessionDepth = 16

// maxEventBytes bounds one event of OpenCode's stream.
const maxEventBytes = 8 << 20

// Options configure a bridge.
type Options struct {
	// Server is OpenCode's server base URL (`opencode serve --port P`:
	// http://127.0.0.1:P).
	Server string
	// Directory is the project directory whose OpenCode instance to watch (OpenCode
	// serves one instance per directory; "" is the server's own working directory).
	Directory string
	// Gatehouse says how to reach Gatehouse (BaseURL, Token, windows); its Agent is set
	// to OpenCode's.
	Gatehouse hookclient.Options
	// Client talks to OpenCode; nil uses one without an overall timeout (the event
	// stream is long-lived).
	Client *http.Client
	// Log receives what the bridge does; nil discards it.
	Log *slog.Logger
	// MinBackoff and MaxBackoff bound the waits between reconnects and retries
	// (200 ms and 10 s when zero).
	MinBackoff, MaxBackoff time.Duration
	// IdleTimeout reconnects a stream that said nothing for this long (OpenCode sends
	// heartbeats; 2 minutes when zero).
	IdleTimeout time.Duration
}

// Bridge is one running bridge.
type Bridge struct {
	o    Options
	base *url.URL

	mu       sync.Mutex
	asks     map[string]*ask // by OpenCode request id
	sessions map[string]sessionInfo
	wg       sync.WaitGroup
}

// ask is one OpenCode request being parked at Gatehouse.
type ask struct {
	id       string
	session  string // the OpenCode session that asks
	cancel   context.CancelFunc
	root     string // the top-level OpenCode session, once known
	replying bool   // the bridge is posting its own reply: not withdrawn any more
}

// sessionInfo is what the bridge reads of an OpenCode session.
type sessionInfo struct {
	ParentID  string `json:"parentID"`
	Directory string `json:"directory"`
}

// New checks o and returns a bridge.
func New(o Options) (*Bridge, error) {
	u, err := url.Parse(strings.TrimSpace(o.Server))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("--server must be OpenCode's absolute http(s) URL, got %q", o.Server)
	}
	u.Path = strings.TrimRight(u.Path, "/")
	a, ok := agents.Default().Lookup(AgentName)
	if !ok {
		return nil, errors.New("the agent registry has no OpenCode agent")
	}
	o.Gatehouse.Agent = a
	if o.Client == nil {
		o.Client = &http.Client{Transport: &http.Transport{Proxy: http.ProxyFromEnvironment, ResponseHeaderTimeout: 30 * time.Second}}
	}
	if o.Log == nil {
		o.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if o.MinBackoff <= 0 {
		o.MinBackoff = 200 * time.Millisecond
	}
	if o.MaxBackoff <= 0 {
		o.MaxBackoff = 10 * time.Second
	}
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = 2 * time.Minute
	}
	return &Bridge{o: o, base: u, asks: map[string]*ask{}, sessions: map[string]sessionInfo{}}, nil
}

// Run bridges until ctx ends, reconnecting to OpenCode with backoff whenever its
// stream ends; it returns once every ask it started has let go. Prompts it was
// waiting on stay pending at Gatehouse for a bridge that comes back.
func (b *Bridge) Run(ctx context.Context) error {
	backoff := b.o.MinBackoff
	for {
		connected, err := b.stream(ctx)
		if ctx.Err() != nil {
			b.wg.Wait()
			return nil
		}
		if connected {
			backoff = b.o.MinBackoff
		}
		b.o.Log.Warn("OpenCode event stream ended; reconnecting", "server", b.base.String(), "err", err, "in", backoff)
		if sleep(ctx, backoff) != nil {
			b.wg.Wait()
			return nil
		}
		backoff = min(backoff*2, b.o.MaxBackoff)
	}
}

// url is OpenCode's URL of path, with the directory parameter.
func (b *Bridge) url(path string) string {
	u := *b.base
	u.Path += path
	if b.o.Directory != "" {
		u.RawQuery = url.Values{"directory": {b.o.Directory}}.Encode()
	}
	return u.String()
}

// stream reads one connection of OpenCode's event stream: once it is open, it parks
// every pending request (and lets go of those no longer pending), then acts on each
// event. connected reports whether the stream opened.
func (b *Bridge) stream(ctx context.Context) (connected bool, err error) {
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	req, err := http.NewRequestWithContext(sctx, http.MethodGet, b.url("/event"), nil)
	if err != nil {
		return false, err
	}
	req.Header.Set("Accept", "text/event-stream")
	resp, err := b.o.Client.Do(req)
	if err != nil {
		return false, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return false, fmt.Errorf("GET /event answered %d", resp.StatusCode)
	}
	b.o.Log.Info("connected to OpenCode", "server", b.base.String(), "directory", b.o.Directory)
	// The stream is open, so nothing asked from now on is missed; what was asked
	// before is in the list. Events that arrived meanwhile are read after it.
	if err := b.reconcile(ctx); err != nil {
		return true, fmt.Errorf("listing pending permissions: %w", err)
	}

	idle := time.AfterFunc(b.o.IdleTimeout, cancel)
	defer idle.Stop()
	r := bufio.NewReaderSize(resp.Body, 64<<10)
	var data bytes.Buffer
	for {
		line, err := r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			data.Write(line) // a long data line: keep reading it
			if data.Len() > maxEventBytes {
				return true, errors.New("an event is larger than the bridge reads")
			}
			continue
		}
		if err != nil {
			return true, err
		}
		idle.Reset(b.o.IdleTimeout)
		line = bytes.TrimRight(line, "\r\n")
		switch {
		case len(line) == 0:
			if data.Len() > 0 {
				b.handle(ctx, data.Bytes())
				data.Reset()
			}
		case bytes.HasPrefix(line, []byte("data:")):
			if data.Len() > 0 {
				data.WriteByte('\n')
			}
			data.Write(bytes.TrimPrefix(bytes.TrimPrefix(line, []byte("data:")), []byte(" ")))
			if data.Len() > maxEventBytes {
				return true, errors.New("an event is larger than the bridge reads")
			}
		}
	}
}

// handle acts on one event of the stream.
func (b *Bridge) handle(ctx context.Context, raw []byte) {
	var ev struct {
		Type       string          `json:"type"`
		Properties json.RawMessage `json:"properties"`
	}
	if json.Unmarshal(raw, &ev) != nil {
		return
	}
	switch ev.Type {
	case eventAsked:
		b.start(ctx, ev.Properties)
	case eventReplied:
		var r struct {
			RequestID string `json:"requestID"`
		}
		if json.Unmarshal(ev.Properties, &r) == nil && r.RequestID != "" {
			b.withdraw(r.RequestID, ev.Properties)
		}
	}
}

// reconcile lists OpenCode's pending requests, parks those not yet parked and
// withdraws the prompts of requests no longer pending (answered while the stream was
// down, or gone with a restarted OpenCode).
func (b *Bridge) reconcile(ctx context.Context) error {
	var pending []json.RawMessage
	if err := b.getJSON(ctx, "/permission", &pending); err != nil {
		return err
	}
	listed := map[string]bool{}
	for _, p := range pending {
		if id := requestID(p); id != "" {
			listed[id] = true
		}
	}
	b.mu.Lock()
	var gone []*ask
	for id, a := range b.asks {
		if !listed[id] && !a.replying {
			gone = append(gone, a)
		}
	}
	b.mu.Unlock()
	for _, a := range gone {
		b.withdraw(a.id, nil)
	}
	for _, p := range pending {
		b.start(ctx, p)
	}
	return nil
}

func requestID(props json.RawMessage) string {
	id, _ := requestIDs(props)
	return id
}

// requestIDs are a permission request's id and session.
func requestIDs(props json.RawMessage) (id, session string) {
	var p struct {
		ID        string `json:"id"`
		SessionID string `json:"sessionID"`
	}
	_ = json.Unmarshal(props, &p)
	return p.ID, p.SessionID
}

// start parks request props unless the bridge waits on it already.
func (b *Bridge) start(ctx context.Context, props json.RawMessage) {
	id, sid := requestIDs(props)
	if id == "" {
		b.o.Log.Warn("OpenCode permission request without an id; ignored")
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.asks[id]; ok {
		return
	}
	actx, cancel := context.WithCancel(ctx)
	a := &ask{id: id, session: sid, cancel: cancel}
	b.asks[id] = a
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		defer cancel()
		b.park(ctx, actx, a, props)
		b.mu.Lock()
		if b.asks[id] == a {
			delete(b.asks, id)
		}
		b.mu.Unlock()
	}()
}

// withdraw lets go of request id, answered elsewhere: its wait is cancelled and its
// prompt withdrawn at Gatehouse at once (rather than after the server's disconnect
// grace). props are the permission.replied event's properties, nil when the request
// merely left the list.
func (b *Bridge) withdraw(id string, props json.RawMessage) {
	b.mu.Lock()
	a := b.asks[id]
	if a == nil || a.replying {
		b.mu.Unlock()
		return
	}
	delete(b.asks, id)
	root := a.root
	b.mu.Unlock()
	a.cancel()
	b.o.Log.Info("OpenCode permission answered elsewhere; withdrawing its prompt", "request", id)
	notice := map[string]any{}
	if props != nil {
		_ = json.Unmarshal(props, &notice)
	}
	notice["requestID"], notice["sessionID"] = id, a.session
	if root != "" {
		notice["rootSessionID"] = root
	}
	body, _ := json.Marshal(map[string]any{"type": eventReplied, "properties": notice})
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		o := b.o.Gatehouse
		o.ReattachFor = 5 * time.Second
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		if out := hookclient.Forward(ctx, o, body); out.Err != nil {
			b.o.Log.Warn("withdrawing the prompt failed; it lapses after the server's disconnect grace", "request", id, "err", out.Err)
		}
	}()
}

// park parks request a at Gatehouse until a verdict comes, then replies in OpenCode.
// ctx is the bridge's, actx the ask's (cancelled when the request is answered
// elsewhere).
func (b *Bridge) park(ctx, actx context.Context, a *ask, props json.RawMessage) {
	var payload map[string]any
	if err := json.Unmarshal(props, &payload); err != nil || payload == nil {
		b.o.Log.Warn("OpenCode permission request is not an object; ignored", "request", a.id)
		return
	}
	sid, _ := payload["sessionID"].(string)
	root, dir := b.rootOf(actx, sid)
	b.mu.Lock()
	a.root = root
	b.mu.Unlock()
	if root != "" && root != sid {
		payload["rootSessionID"] = root
	}
	if dir == "" {
		dir = b.o.Directory
	}
	if dir != "" {
		payload["directory"] = dir
	}
	backoff := b.o.MinBackoff
	for generation := 0; ; {
		// One prompt per OpenCode request (and generation): a bridge that restarts, or
		// re-parks after a dropped connection, re-attaches to it.
		payload[hookclient.ReattachField] = ids.Deterministic(promptPrefix, []byte(a.id+"\x00"+strconv.Itoa(generation)))
		body, _ := json.Marshal(payload)
		out := hookclient.Forward(actx, b.o.Gatehouse, body)
		if actx.Err() != nil {
			return
		}
		switch {
		case out.Err == nil && len(out.Answer) > 0:
			b.reply(ctx, a, out.Answer)
			return
		case out.Err == nil:
			// The prompt ended without a verdict (it expired, or lapsed while no bridge
			// waited on it) and OpenCode still waits: ask again, under a fresh prompt.
			generation++
			b.o.Log.Info("Gatehouse gave no verdict; asking again", "request", a.id, "in", backoff)
		case hookclient.Permanent(out.Err):
			b.o.Log.Warn("Gatehouse refused the request; rejecting it in OpenCode", "request", a.id, "err", out.Err)
			reject, _ := json.Marshal(map[string]any{"reply": "reject", "message": "Gatehouse could not be asked (" + out.Err.Error() + "), so the bridge rejected this request."})
			b.reply(ctx, a, reject)
			return
		default:
			b.o.Log.Warn("cannot reach Gatehouse; retrying", "request", a.id, "err", out.Err, "in", backoff)
		}
		if sleep(actx, backoff) != nil {
			return
		}
		backoff = min(backoff*2, b.o.MaxBackoff)
	}
}

// reply posts answer (OpenCode's reply body) for request a, retrying while OpenCode
// cannot be reached. A 404 means the request is gone (answered elsewhere, or OpenCode
// restarted): nothing to do.
func (b *Bridge) reply(ctx context.Context, a *ask, answer []byte) {
	var body struct {
		Reply   string `json:"reply"`
		Message string `json:"message,omitempty"`
	}
	if json.Unmarshal(answer, &body) != nil || (body.Reply != "once" && body.Reply != "always" && body.Reply != "reject") {
		body.Reply, body.Message = "reject", "Gatehouse answered something that is not an OpenCode reply, so the bridge rejected this request."
	}
	raw, _ := json.Marshal(body)
	b.mu.Lock()
	a.replying = true
	b.mu.Unlock()
	backoff := b.o.MinBackoff
	for {
		status, err := b.post(ctx, "/permission/"+url.PathEscape(a.id)+"/reply", raw)
		switch {
		case err == nil && status == http.StatusOK:
			b.o.Log.Info("answered OpenCode", "request", a.id, "reply", body.Reply)
			return
		case err == nil && status == http.StatusNotFound:
			b.o.Log.Info("OpenCode request already gone; nothing to answer", "request", a.id)
			return
		case err == nil && status < 500:
			b.o.Log.Warn("OpenCode refused the reply", "request", a.id, "status", status)
			return
		}
		b.o.Log.Warn("cannot answer OpenCode; retrying", "request", a.id, "status", status, "err", err, "in", backoff)
		if sleep(ctx, backoff) != nil {
			return
		}
		backoff = min(backoff*2, b.o.MaxBackoff)
	}
}

// rootOf finds the top-level session of OpenCode session sid (following parentID)
// and sid's directory; on failure sid itself, so the request still parks.
func (b *Bridge) rootOf(ctx context.Context, sid string) (root, dir string) {
	root = sid
	for depth := 0; sid != "" && depth < maxSessionDepth; depth++ {
		info, err := b.session(ctx, sid)
		if err != nil {
			b.o.Log.Warn("cannot read OpenCode session; parking under it", "session", sid, "err", err)
			return root, dir
		}
		if depth == 0 {
			dir = info.Directory
		}
		root = sid
		sid = info.ParentID
	}
	return root, dir
}

func (b *Bridge) session(ctx context.Context, sid string) (sessionInfo, error) {
	b.mu.Lock()
	info, ok := b.sessions[sid]
	b.mu.Unlock()
	if ok {
		return info, nil
	}
	if err := b.getJSON(ctx, "/session/"+url.PathEscape(sid), &info); err != nil {
		return info, err
	}
	b.mu.Lock()
	if len(b.sessions) > 10000 {
		clear(b.sessions)
	}
	b.sessions[sid] = info // a session's parent and directory do not change
	b.mu.Unlock()
	return info, nil
}

func (b *Bridge) getJSON(ctx context.Context, path string, v any) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, b.url(path), nil)
	if err != nil {
		return err
	}
	resp, err := b.o.Client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s answered %d", path, resp.StatusCode)
	}
	return json.NewDecoder(io.LimitReader(resp.Body, maxEventBytes)).Decode(v)
}

func (b *Bridge) post(ctx context.Context, path string, body []byte) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, b.url(path), bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := b.o.Client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, nil
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
