// Package webhooktest is a real Standard Webhooks receiver on loopback for tests: it
// verifies every delivery with the standardwebhooks library (the same check a person's
// receiver makes), records what it accepted, and can be told to fail or hang, so tests
// see signatures, retries and deduplication ids as a receiver does.
package webhooktest

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/gatehouse-dev/gatehouse/internal/testkit/receivertest"
)

// maxBody bounds a delivery the receiver reads.
const maxBody = 1 << 20

// NewSecret returns a fresh Standard Webhooks secret: whsec_ and the base64 of 32
// random bytes.
func NewSecret() string {
	key := make([]byte, 32)
	_, _ = rand.Read(key) // crypto/rand.Read never fails (it crashes the program instead)
	return "whsec_" + base64.StdEncoding.EncodeToString(key)
}

// Delivery is one request the receiver verified and accepted.
type Delivery struct {
	// ID is the webhook-id header.
	ID string
	// SignedAt is the webhook-timestamp header.
	SignedAt time.Time
	Type     string
	// Timestamp is the body's timestamp, as sent.
	Timestamp string
	Data      Data
	// Fields and DataFields are the body's and data's keys as sent, for tests that
	// check the body has exactly the SPEC's fields.
	Fields     []string
	DataFields []string
	Header     http.Header
	Body       []byte
}

// Data is the body's data object (SPEC §11).
type Data struct {
	SessionID     string `json:"session_id"`
	ElicitationID string `json:"elicitation_id"`
	Message       string `json:"message"`
	ApproveURL    string `json:"approve_url"`
	Origin        string `json:"origin"`
	Status        string `json:"status"`
	Action        string `json:"action"`
	ResolvedBy    string `json:"resolved_by"`
	ResolvedVia   string `json:"resolved_via"`
}

// Rejection is a request that failed verification (answered 401).
type Rejection struct {
	ID     string
	Reason string
}

// Fault is how the receiver misbehaves (receivertest.Fault): answer Status, or hang for
// Hang (until the client gives up or the receiver closes) and then answer Status (503).
type Fault = receivertest.Fault

// Status is a Fault that answers code.
func Status(code int) Fault { return receivertest.Status(code) }

// Hang is a Fault that holds the request for d: give it longer than the client's
// timeout to see the client time out.
func Hang(d time.Duration) Fault { return receivertest.Hang(d) }

// Receiver is the webhook receiver. Its methods are safe for concurrent use: the
// channel under test posts from the dispatcher's goroutines while the test waits.
type Receiver struct {
	// URL is the receiver's endpoint (http://127.0.0.1:port/hook).
	URL string
	// Secret is the secret it verifies with.
	Secret string

	srv    *httptest.Server
	wh     *standardwebhooks.Webhook
	faults receivertest.Faults

	mu         sync.Mutex
	changed    chan struct{} // closed and replaced on every recorded request
	deliveries []Delivery
	rejections []Rejection
	attempts   map[string]int
	accepted   map[string]int
	conns      int
}

// New starts a receiver verifying with secret (NewSecret() when ""), closed when the test
// ends.
func New(t testing.TB, secret string) *Receiver {
	t.Helper()
	if secret == "" {
		secret = NewSecret()
	}
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatalf("webhooktest: bad secret: %v", err)
	}
	r := &Receiver{
		Secret:   secret,
		wh:       wh,
		changed:  make(chan struct{}),
		attempts: map[string]int{},
		accepted: map[string]int{},
	}
	r.srv = httptest.NewUnstartedServer(http.HandlerFunc(r.serve))
	r.srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			r.mu.Lock()
			r.conns++
			r.mu.Unlock()
		}
	}
	r.srv.Start()
	r.URL = r.srv.URL + "/hook"
	t.Cleanup(r.Close)
	return r
}

// Close stops the receiver, releasing hanging requests first.
func (r *Receiver) Close() {
	r.faults.Release()
	r.srv.Close()
}

// FailNext makes the next n verified requests suffer f.
func (r *Receiver) FailNext(n int, f Fault) {
	r.faults.Set(n, f)
}

// FailAlways makes every verified request suffer f until Recover.
func (r *Receiver) FailAlways(f Fault) { r.FailNext(-1, f) }

// Recover makes the receiver accept again.
func (r *Receiver) Recover() { r.FailNext(0, Fault{}) }

func (r *Receiver) serve(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodPost {
		http.Error(w, "POST only", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(io.LimitReader(req.Body, maxBody))
	if err != nil {
		http.Error(w, "unreadable body", http.StatusBadRequest)
		return
	}
	id := req.Header.Get(standardwebhooks.HeaderWebhookID)
	if err := r.wh.Verify(body, req.Header); err != nil {
		r.record(func() { r.rejections = append(r.rejections, Rejection{ID: id, Reason: err.Error()}) })
		http.Error(w, "signature verification failed", http.StatusUnauthorized)
		return
	}
	d, err := decode(id, req.Header, body)
	if err != nil {
		r.record(func() { r.rejections = append(r.rejections, Rejection{ID: id, Reason: err.Error()}) })
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}

	r.record(func() { r.attempts[id]++ })
	if f, failing := r.faults.Take(); failing {
		status := r.faults.Hold(req.Context(), f)
		http.Error(w, fmt.Sprintf("webhooktest: injected %d", status), status)
		return
	}
	r.record(func() {
		r.deliveries = append(r.deliveries, d)
		r.accepted[id]++
	})
	w.WriteHeader(http.StatusNoContent)
}

// decode parses a verified delivery.
func decode(id string, h http.Header, body []byte) (Delivery, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(body, &raw); err != nil {
		return Delivery{}, fmt.Errorf("body is not a JSON object: %v", err)
	}
	var ev struct {
		Type      string          `json:"type"`
		Timestamp string          `json:"timestamp"`
		Data      json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(body, &ev); err != nil {
		return Delivery{}, fmt.Errorf("body: %v", err)
	}
	var dataRaw map[string]json.RawMessage
	if err := json.Unmarshal(ev.Data, &dataRaw); err != nil {
		return Delivery{}, fmt.Errorf("data is not a JSON object: %v", err)
	}
	d := Delivery{ID: id, Type: ev.Type, Timestamp: ev.Timestamp, Header: h.Clone(), Body: body}
	if err := json.Unmarshal(ev.Data, &d.Data); err != nil {
		return Delivery{}, fmt.Errorf("data: %v", err)
	}
	ts, _ := strconv.ParseInt(h.Get(standardwebhooks.HeaderWebhookTimestamp), 10, 64)
	d.SignedAt = time.Unix(ts, 0).UTC()
	for k := range raw {
		d.Fields = append(d.Fields, k)
	}
	for k := range dataRaw {
		d.DataFields = append(d.DataFields, k)
	}
	return d, nil
}

// record applies change under the lock and wakes waiters.
func (r *Receiver) record(change func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	change()
	close(r.changed)
	r.changed = make(chan struct{})
}

// Deliveries returns the accepted deliveries, in arrival order.
func (r *Receiver) Deliveries() []Delivery {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Delivery(nil), r.deliveries...)
}

// Rejections returns the requests that failed verification or decoding.
func (r *Receiver) Rejections() []Rejection {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Rejection(nil), r.rejections...)
}

// Connections counts the TCP connections clients opened, for tests that check a
// sender reuses connections (the dispatcher's throughput depends on it).
func (r *Receiver) Connections() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.conns
}

// Attempts counts the verified requests with webhook-id id, failed ones included.
func (r *Receiver) Attempts(id string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.attempts[id]
}

// Count counts the accepted deliveries with webhook-id id (more than one is a
// duplicate a real receiver would drop).
func (r *Receiver) Count(id string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.accepted[id]
}

// WaitFor returns the first accepted delivery that match reports, waiting up to timeout
// for it; the test fails at the deadline.
func (r *Receiver) WaitFor(t testing.TB, match func(Delivery) bool, timeout time.Duration) Delivery {
	t.Helper()
	var found Delivery
	r.wait(t, timeout, "a matching delivery", func() bool {
		for _, d := range r.deliveries {
			if match(d) {
				found = d
				return true
			}
		}
		return false
	})
	return found
}

// WaitCount waits up to timeout until at least n deliveries were accepted and returns
// them; the test fails at the deadline.
func (r *Receiver) WaitCount(t testing.TB, n int, timeout time.Duration) []Delivery {
	t.Helper()
	r.wait(t, timeout, fmt.Sprintf("%d deliveries", n), func() bool { return len(r.deliveries) >= n })
	return r.Deliveries()
}

// WaitAttempts waits up to timeout until at least n verified requests carried
// webhook-id id (failed ones included): a retry test waits for the dispatcher's
// retries with it.
func (r *Receiver) WaitAttempts(t testing.TB, id string, n int, timeout time.Duration) {
	t.Helper()
	r.wait(t, timeout, fmt.Sprintf("%d attempts of %q", n, id), func() bool { return r.attempts[id] >= n })
}

// WaitRejection waits up to timeout for a request that failed verification.
func (r *Receiver) WaitRejection(t testing.TB, timeout time.Duration) Rejection {
	t.Helper()
	var found Rejection
	r.wait(t, timeout, "a rejected request", func() bool {
		if len(r.rejections) == 0 {
			return false
		}
		found = r.rejections[0]
		return true
	})
	return found
}

// wait evaluates done under the lock each time the receiver records something, until
// it holds or the deadline passes.
func (r *Receiver) wait(t testing.TB, timeout time.Duration, what string, done func() bool) {
	t.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		r.mu.Lock()
		ok, changed := done(), r.changed
		got, rejected := len(r.deliveries), len(r.rejections)
		r.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-changed:
		case <-deadline.C:
			t.Fatalf("webhooktest: no %s within %v (%d accepted, %d rejected)", what, timeout, got, rejected)
			return
		}
	}
}

// TotalAttempts counts every verified request so far, accepted or failed on purpose,
// including one still held by a Hang fault.
func (r *Receiver) TotalAttempts() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, a := range r.attempts {
		n += a
	}
	return n
}
