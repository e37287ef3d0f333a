package webhook_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/notify"
	"github.com/gatehouse-dev/gatehouse/internal/notify/webhook"
	"github.com/gatehouse-dev/gatehouse/internal/testkit/webhooktest"
)

const wait = 5 * time.Second

// message is a created notification for the receiver rcv.
func message(rcv *webhooktest.Receiver, kind string) *notify.Message {
	return &notify.Message{
		DeliveryID: "dlv_" + kind + "_01",
		Kind:       kind,
		Recipient:  "alice@example.com",
		Prompt: notify.Summary{
			SessionID:     "ses_1",
			ElicitationID: "eli_1",
			Origin:        "claude_permission",
			Title:         "Claude Code wants to run Bash",
			Detail:        "rm -rf build/ && echo $SECRET_TOKEN",
			Answerable:    true,
		},
		ApproveURL: "https://gatehouse.example/approve/eli_1",
		AcceptURL:  "https://gatehouse.example/a/accept-token",
		DeclineURL: "https://gatehouse.example/a/decline-token",
		Target:     notify.Target{URL: rcv.URL, Secret: rcv.Secret},
	}
}

func channel(timeout time.Duration) *webhook.Channel {
	return webhook.New(notify.HTTPClient(true, timeout))
}

func TestCreatedDeliveryVerifiesAndHasExactlyTheSpecFields(t *testing.T) {
	rcv := webhooktest.New(t, "")
	m := message(rcv, notify.KindCreated)
	if _, err := channel(wait).Send(t.Context(), m); err != nil {
		t.Fatalf("Send: %v", err)
	}
	d := rcv.WaitFor(t, func(d webhooktest.Delivery) bool { return true }, wait)

	if d.ID != m.DeliveryID {
		t.Errorf("webhook-id = %q, want the delivery id %q", d.ID, m.DeliveryID)
	}
	if d.Type != webhook.TypeCreated {
		t.Errorf("type = %q", d.Type)
	}
	if got, want := sorted(d.Fields), []string{"data", "timestamp", "type"}; !slices.Equal(got, want) {
		t.Errorf("body fields = %v, want %v", got, want)
	}
	want := []string{"approve_url", "elicitation_id", "message", "origin", "session_id", "status"}
	if got := sorted(d.DataFields); !slices.Equal(got, want) {
		t.Errorf("data fields = %v, want %v", got, want)
	}
	wantData := webhooktest.Data{
		SessionID: "ses_1", ElicitationID: "eli_1", Message: "Claude Code wants to run Bash",
		ApproveURL: m.ApproveURL, Origin: "claude_permission", Status: "pending",
	}
	if d.Data != wantData {
		t.Errorf("data = %+v, want %+v", d.Data, wantData)
	}
	ts, err := time.Parse(time.RFC3339, d.Timestamp)
	if err != nil {
		t.Fatalf("timestamp %q is not RFC 3339: %v", d.Timestamp, err)
	}
	if !ts.Equal(d.SignedAt) {
		t.Errorf("body timestamp %v differs from webhook-timestamp %v", ts, d.SignedAt)
	}
	if got := d.Header.Get("User-Agent"); got != webhook.UserAgent {
		t.Errorf("User-Agent = %q", got)
	}
	if got := d.Header.Get("Content-Type"); got != "application/json" {
		t.Errorf("Content-Type = %q", got)
	}
	if strings.Contains(string(d.Body), "SECRET_TOKEN") {
		t.Errorf("the detail (which may hold secrets) went to the receiver: %s", d.Body)
	}
}

func TestResolvedDeliveryCarriesTheOutcome(t *testing.T) {
	rcv := webhooktest.New(t, "")
	m := message(rcv, notify.KindResolved)
	m.AcceptURL, m.DeclineURL = "", ""
	m.Outcome = &notify.Outcome{Status: "resolved", Action: "decline", ResolvedBy: "bob@example.com", ResolvedVia: "ntfy"}
	if _, err := channel(wait).Send(t.Context(), m); err != nil {
		t.Fatalf("Send: %v", err)
	}
	d := rcv.WaitCount(t, 1, wait)[0]
	if d.Type != webhook.TypeResolved {
		t.Errorf("type = %q", d.Type)
	}
	want := []string{"action", "approve_url", "elicitation_id", "message", "origin", "resolved_by", "resolved_via", "session_id", "status"}
	if got := sorted(d.DataFields); !slices.Equal(got, want) {
		t.Errorf("data fields = %v, want %v", got, want)
	}
	if d.Data.Status != "resolved" || d.Data.Action != "decline" || d.Data.ResolvedBy != "bob@example.com" || d.Data.ResolvedVia != "ntfy" {
		t.Errorf("data = %+v", d.Data)
	}

	// An expired prompt has no action and nobody who resolved it: those keys are absent.
	m.DeliveryID = "dlv_expired"
	m.Outcome = &notify.Outcome{Status: "expired"}
	if _, err := channel(wait).Send(t.Context(), m); err != nil {
		t.Fatalf("Send: %v", err)
	}
	d = rcv.WaitFor(t, func(d webhooktest.Delivery) bool { return d.ID == "dlv_expired" }, wait)
	if d.Data.Status != "expired" || slices.Contains(d.DataFields, "action") || slices.Contains(d.DataFields, "resolved_by") {
		t.Errorf("expired: data = %+v, fields %v", d.Data, d.DataFields)
	}
}

func TestReminderIsSentAsCreatedAgain(t *testing.T) {
	rcv := webhooktest.New(t, "")
	m := message(rcv, notify.KindReminder)
	if _, err := channel(wait).Send(t.Context(), m); err != nil {
		t.Fatalf("Send: %v", err)
	}
	d := rcv.WaitCount(t, 1, wait)[0]
	if d.Type != webhook.TypeCreated || d.Data.Status != "pending" || d.Data.ElicitationID != "eli_1" {
		t.Errorf("reminder delivered as %q %+v", d.Type, d.Data)
	}
}

func TestWrongSecretFailsVerification(t *testing.T) {
	rcv := webhooktest.New(t, "")
	m := message(rcv, notify.KindCreated)
	m.Target.Secret = webhooktest.NewSecret() // not the receiver's
	_, err := channel(wait).Send(t.Context(), m)
	if err == nil || !notify.IsPermanent(err) || !strings.Contains(err.Error(), "401") {
		t.Fatalf("Send = %v, want a permanent 401", err)
	}
	rej := rcv.WaitRejection(t, wait)
	if rej.ID != m.DeliveryID || !strings.Contains(rej.Reason, "no matching signature") {
		t.Errorf("rejection = %+v", rej)
	}
	if n := len(rcv.Deliveries()); n != 0 {
		t.Errorf("%d deliveries accepted with a wrong secret", n)
	}
	if strings.Contains(err.Error(), m.Target.Secret) || strings.Contains(err.Error(), rcv.Secret) {
		t.Errorf("error carries a secret: %v", err)
	}
}

func TestStaleTimestampIsRefused(t *testing.T) {
	rcv := webhooktest.New(t, "")
	c := channel(wait)
	c.Now = func() time.Time { return time.Now().Add(-10 * time.Minute) }
	if _, err := c.Send(t.Context(), message(rcv, notify.KindCreated)); err == nil {
		t.Fatal("a delivery signed 10 minutes ago was accepted")
	}
	if rej := rcv.WaitRejection(t, wait); !strings.Contains(rej.Reason, "too old") {
		t.Errorf("rejection = %+v", rej)
	}
}

func TestStatusClassification(t *testing.T) {
	for _, tc := range []struct {
		status    int
		permanent bool
	}{
		{500, false}, {502, false}, {503, false},
		{408, false}, {409, false}, {425, false}, {429, false},
		{410, true}, {400, true}, {403, true}, {404, true}, {413, true},
	} {
		t.Run(fmt.Sprint(tc.status), func(t *testing.T) {
			rcv := webhooktest.New(t, "")
			rcv.FailNext(1, webhooktest.Status(tc.status))
			_, err := channel(wait).Send(t.Context(), message(rcv, notify.KindCreated))
			if err == nil {
				t.Fatal("Send succeeded against a failing receiver")
			}
			if notify.IsPermanent(err) != tc.permanent {
				t.Errorf("IsPermanent(%v) = %v, want %v", err, notify.IsPermanent(err), tc.permanent)
			}
			if !strings.Contains(err.Error(), fmt.Sprint(tc.status)) {
				t.Errorf("error does not name the status: %v", err)
			}
		})
	}
}

func TestRetryKeepsTheWebhookID(t *testing.T) {
	rcv := webhooktest.New(t, "")
	rcv.FailNext(2, webhooktest.Status(http.StatusInternalServerError))
	c := channel(wait)
	m := message(rcv, notify.KindCreated)
	for i := range 2 {
		if _, err := c.Send(t.Context(), m); err == nil || notify.IsPermanent(err) {
			t.Fatalf("attempt %d: %v, want a retryable error", i+1, err)
		}
	}
	if _, err := c.Send(t.Context(), m); err != nil {
		t.Fatalf("third attempt: %v", err)
	}
	d := rcv.WaitCount(t, 1, wait)[0]
	if d.ID != m.DeliveryID || rcv.Attempts(m.DeliveryID) != 3 || rcv.Count(m.DeliveryID) != 1 {
		t.Errorf("id %q, attempts %d, accepted %d", d.ID, rcv.Attempts(m.DeliveryID), rcv.Count(m.DeliveryID))
	}
}

func TestHangingReceiverTimesOut(t *testing.T) {
	rcv := webhooktest.New(t, "")
	rcv.FailAlways(webhooktest.Hang(time.Minute))

	// The client's timeout (the dispatcher's send timeout).
	_, err := channel(300*time.Millisecond).Send(t.Context(), message(rcv, notify.KindCreated))
	if !errors.Is(err, context.DeadlineExceeded) || notify.IsPermanent(err) {
		t.Errorf("client timeout: %v, want a retryable deadline error", err)
	}

	// The context's deadline.
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	_, err = channel(time.Minute).Send(ctx, message(rcv, notify.KindCreated))
	if !errors.Is(err, context.DeadlineExceeded) || notify.IsPermanent(err) {
		t.Errorf("context deadline: %v, want a retryable deadline error", err)
	}
}

func TestErrorsDoNotCarryTheURLOrSecret(t *testing.T) {
	rcv := webhooktest.New(t, "")
	m := message(rcv, notify.KindCreated)
	m.Target.URL = rcv.URL + "?token=hunter2"
	rcv.Close() // connection refused
	_, err := channel(wait).Send(t.Context(), m)
	if err == nil || notify.IsPermanent(err) {
		t.Fatalf("Send to a closed receiver = %v, want a retryable error", err)
	}
	if strings.Contains(err.Error(), "hunter2") {
		t.Errorf("error carries the URL's token: %v", err)
	}

	m.Target.Secret = "whsec_not base64!"
	_, err = channel(wait).Send(t.Context(), m)
	if !notify.IsPermanent(err) || strings.Contains(err.Error(), "not base64!") {
		t.Errorf("bad secret: %v, want a permanent error without the secret", err)
	}
	m.Target.Secret = ""
	if _, err = channel(wait).Send(t.Context(), m); !notify.IsPermanent(err) {
		t.Errorf("no secret: %v, want a permanent error", err)
	}
}

func TestHTTPClientRefusesLoopbackUnlessAllowed(t *testing.T) {
	rcv := webhooktest.New(t, "")
	m := message(rcv, notify.KindCreated)
	_, err := webhook.New(notify.HTTPClient(false, wait)).Send(t.Context(), m)
	if err == nil || !strings.Contains(err.Error(), "private address") {
		t.Fatalf("guarded client: %v, want a refusal of the private address", err)
	}
	if n := rcv.Attempts(m.DeliveryID) + len(rcv.Rejections()); n != 0 {
		t.Fatalf("the receiver saw %d requests through the guarded client", n)
	}
	if _, err := webhook.New(notify.HTTPClient(true, wait)).Send(t.Context(), m); err != nil {
		t.Fatalf("client allowing private addresses: %v", err)
	}
	rcv.WaitCount(t, 1, wait)
}

// TestConnectionsAreReused guards the dispatcher's throughput: answers are drained so
// sequential deliveries share one connection, even when the receiver says a lot.
func TestConnectionsAreReused(t *testing.T) {
	rcv := webhooktest.New(t, "")
	c := channel(wait)
	m := message(rcv, notify.KindCreated)
	for i := range 50 {
		m.DeliveryID = fmt.Sprintf("dlv_%d", i)
		if i%10 == 0 {
			rcv.FailNext(1, webhooktest.Status(http.StatusServiceUnavailable))
		}
		_, _ = c.Send(t.Context(), m)
	}
	if n := rcv.Connections(); n != 1 {
		t.Errorf("50 sequential deliveries opened %d connections, want 1", n)
	}
}

func TestManyConcurrentDeliveries(t *testing.T) {
	rcv := webhooktest.New(t, "")
	c := channel(wait)
	const n, workers = 2000, 32
	var wg sync.WaitGroup
	errs := make(chan error, n)
	start := time.Now()
	for w := range workers {
		wg.Go(func() {
			for i := w; i < n; i += workers {
				m := message(rcv, notify.KindCreated)
				m.DeliveryID = fmt.Sprintf("dlv_%d", i)
				if _, err := c.Send(t.Context(), m); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("Send: %v", err)
	}
	rcv.WaitCount(t, n, wait)
	t.Logf("%d deliveries in %v (%.0f/s) over %d connections", n, time.Since(start),
		n/time.Since(start).Seconds(), rcv.Connections())
	// The transport may dial a spare connection while an idle one comes back; a few
	// extra are fine, one per delivery is not.
	if rcv.Connections() > 2*workers {
		t.Errorf("%d connections for %d workers: connections are not reused", rcv.Connections(), workers)
	}
}

func BenchmarkSend(b *testing.B) {
	rcv := webhooktest.New(b, "")
	c := channel(wait)
	m := message(rcv, notify.KindCreated)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := c.Send(context.Background(), m); err != nil {
				b.Error(err)
			}
		}
	})
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}
