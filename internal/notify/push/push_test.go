package push_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	webpush "github.com/SherClockHolmes/webpush-go"

	"github.com/gatehouse-dev/gatehouse/internal/notify"
	"github.com/gatehouse-dev/gatehouse/internal/notify/push"
	"github.com/gatehouse-dev/gatehouse/internal/testkit/pushtest"
)

const wait = 20 * time.Second

func newKeys(t *testing.T) push.Keys {
	t.Helper()
	priv, pub, err := webpush.GenerateVAPIDKeys()
	if err != nil {
		t.Fatal(err)
	}
	return push.Keys{Public: pub, Private: priv}
}

func message(kind string, sub notify.PushSubscription) *notify.Message {
	return &notify.Message{
		DeliveryID: "d1", Kind: kind, Recipient: "alice@example.com",
		Prompt: notify.Summary{ElicitationID: "elicit_0123456789abcdef0123456789abcdef", SessionTitle: "fix the build",
			Agent: "main", Title: "Claude Code wants to run Bash", Detail: "go test ./...", Answerable: true,
			ExpiresAt: time.Now().Add(10 * time.Minute)},
		ApproveURL: "https://gh.example/approve/conv_1/elicit_1",
		AcceptURL:  "https://gh.example/act/tokA", DeclineURL: "https://gh.example/act/tokD",
		Target: notify.Target{Push: &sub},
	}
}

func TestPushArrivesDecryptedWithTagAndActions(t *testing.T) {
	svc := pushtest.NewService(t)
	keys := newKeys(t)
	svc.ExpectVAPIDKey(keys.Public)
	sub := svc.NewSubscription()
	ch := push.New(keys, "https://gh.example", notify.HTTPClient(true, 5*time.Second))
	if ch.Name() != notify.ChannelPush {
		t.Fatalf("Name() = %q", ch.Name())
	}
	m := message(notify.KindCreated, sub)
	if _, err := ch.Send(context.Background(), m); err != nil {
		t.Fatalf("send: %v", err)
	}
	got := svc.Next(t, wait)
	var p push.Payload
	if err := got.Decode(&p); err != nil {
		t.Fatalf("payload %q: %v", got.Raw, err)
	}
	if p.Kind != "created" || p.Tag != m.Prompt.ElicitationID || p.URL != m.ApproveURL || p.Title != m.Prompt.Title {
		t.Fatalf("payload = %+v", p)
	}
	if !strings.Contains(p.Body, "go test ./...") || !strings.Contains(p.Body, "fix the build") {
		t.Fatalf("body = %q", p.Body)
	}
	if len(p.Actions) != 2 || p.Actions[0] != (push.Action{Action: "accept", Title: "Approve", URL: m.AcceptURL}) ||
		p.Actions[1] != (push.Action{Action: "decline", Title: "Reject", URL: m.DeclineURL}) {
		t.Fatalf("actions = %+v", p.Actions)
	}
	if got.Urgency != "high" || got.Topic != push.Topic(m.Prompt.ElicitationID) || len(got.Topic) > 32 || got.Topic == "" {
		t.Fatalf("urgency %q topic %q", got.Urgency, got.Topic)
	}
	if got.TTL < 500 || got.TTL > 600 {
		t.Fatalf("TTL %d: want about the 10 minutes until the prompt expires", got.TTL)
	}
	if got.Subject != "https://gh.example" {
		t.Fatalf("sub = %q", got.Subject)
	}

	// The outcome replaces the question: same tag and topic, no buttons.
	r := message(notify.KindResolved, sub)
	r.AcceptURL, r.DeclineURL = "", ""
	r.Outcome = &notify.Outcome{Status: "resolved", Action: "decline", ResolvedBy: "bob@example.com", ResolvedVia: "inbox"}
	if _, err := ch.Send(context.Background(), r); err != nil {
		t.Fatalf("send resolved: %v", err)
	}
	got = svc.Next(t, wait)
	p = push.Payload{}
	if err := got.Decode(&p); err != nil {
		t.Fatal(err)
	}
	if p.Kind != "resolved" || p.Tag != m.Prompt.ElicitationID || len(p.Actions) != 0 ||
		p.Outcome != "Rejected by bob@example.com via inbox" || got.Topic != push.Topic(m.Prompt.ElicitationID) || got.Urgency != "normal" {
		t.Fatalf("resolved payload %+v, topic %q urgency %q", p, got.Topic, got.Urgency)
	}
}

func TestPushNotAnswerableHasNoActions(t *testing.T) {
	svc := pushtest.NewService(t)
	keys := newKeys(t)
	sub := svc.NewSubscription()
	ch := push.New(keys, "ops@example.com", notify.HTTPClient(true, 5*time.Second))
	m := message(notify.KindReminder, sub)
	m.Prompt.Answerable, m.AcceptURL, m.DeclineURL = false, "", ""
	if _, err := ch.Send(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	got := svc.Next(t, wait)
	if _, ok := got.JSON["actions"]; ok || !strings.HasPrefix(got.JSON["title"].(string), "Reminder: ") {
		t.Fatalf("payload %s", got.Raw)
	}
	if got.Subject != "mailto:ops@example.com" {
		t.Fatalf("sub = %q", got.Subject)
	}
}

func TestPushGoneIsPermanent(t *testing.T) {
	svc := pushtest.NewService(t)
	keys := newKeys(t)
	ch := push.New(keys, "https://gh.example", notify.HTTPClient(true, 5*time.Second))
	sub := svc.NewSubscription()
	svc.Unsubscribe(sub)
	_, err := ch.Send(context.Background(), message(notify.KindCreated, sub))
	if !notify.IsPermanent(err) || !errors.Is(err, push.ErrGone) {
		t.Fatalf("410: err = %v, want Permanent(ErrGone)", err)
	}
	sub2 := svc.NewSubscription()
	svc.FailNext(1, 404)
	if _, err := ch.Send(context.Background(), message(notify.KindCreated, sub2)); !notify.IsPermanent(err) || !errors.Is(err, push.ErrGone) {
		t.Fatalf("404: err = %v", err)
	}
}

func TestPushServerErrorIsRetryable(t *testing.T) {
	svc := pushtest.NewService(t)
	keys := newKeys(t)
	ch := push.New(keys, "https://gh.example", notify.HTTPClient(true, 5*time.Second))
	sub := svc.NewSubscription()
	svc.FailNext(1, 500)
	_, err := ch.Send(context.Background(), message(notify.KindCreated, sub))
	if err == nil || notify.IsPermanent(err) || !strings.Contains(err.Error(), "500") {
		t.Fatalf("500: err = %v, want a retryable error naming the status", err)
	}
	// The retry goes through.
	if _, err := ch.Send(context.Background(), message(notify.KindCreated, sub)); err != nil {
		t.Fatal(err)
	}
	svc.Next(t, wait)
}

func TestPushHungServiceTimesOut(t *testing.T) {
	svc := pushtest.NewService(t)
	ch := push.New(newKeys(t), "https://gh.example", notify.HTTPClient(true, 5*time.Second))
	sub := svc.NewSubscription()
	svc.HangNext(1)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err := ch.Send(ctx, message(notify.KindCreated, sub))
	if err == nil || notify.IsPermanent(err) {
		t.Fatalf("hung push service: err = %v, want a retryable error", err)
	}
}

func TestPushWrongVAPIDKeyDoesNotVerify(t *testing.T) {
	svc := pushtest.NewService(t)
	good, other := newKeys(t), newKeys(t)
	sub := svc.NewSubscription()
	// A private key that does not belong to the public key sent as k: the JWT
	// signature must fail to verify.
	ch := push.New(push.Keys{Public: good.Public, Private: other.Private}, "https://gh.example", notify.HTTPClient(true, 5*time.Second))
	_, err := ch.Send(context.Background(), message(notify.KindCreated, sub))
	if err == nil || !strings.Contains(err.Error(), "401") {
		t.Fatalf("err = %v, want the push service's 401", err)
	}
	if why := svc.NextRejection(t, wait); !strings.Contains(why, "signature") {
		t.Fatalf("rejection: %s", why)
	}
	// Signed correctly, but with a key the subscription was not made for.
	svc.ExpectVAPIDKey(good.Public)
	ch = push.New(other, "https://gh.example", notify.HTTPClient(true, 5*time.Second))
	if _, err := ch.Send(context.Background(), message(notify.KindCreated, sub)); err == nil {
		t.Fatal("push with a foreign application server key was accepted")
	}
	if why := svc.NextRejection(t, wait); !strings.Contains(why, "application server key") {
		t.Fatalf("rejection: %s", why)
	}
	if !svc.None() {
		t.Fatal("a refused push was delivered")
	}
}

func TestPushBadSubscriptionKeysArePermanent(t *testing.T) {
	ch := push.New(newKeys(t), "https://gh.example", notify.HTTPClient(true, 5*time.Second))
	sub := notify.PushSubscription{Endpoint: "http://127.0.0.1:1/push/x", P256dh: "bm90IGEgcG9pbnQ", Auth: "AAAAAAAAAAAAAAAAAAAAAA"}
	if _, err := ch.Send(context.Background(), message(notify.KindCreated, sub)); !notify.IsPermanent(err) {
		t.Fatalf("err = %v, want Permanent", err)
	}
}

func TestPayloadIsBounded(t *testing.T) {
	svc := pushtest.NewService(t)
	sub := svc.NewSubscription()
	m := message(notify.KindCreated, sub)
	m.Prompt.Detail = strings.Repeat("é\"<", 5000)
	p := push.BuildPayload(m)
	if b, _ := jsonLen(p); b > 3000 || !strings.HasSuffix(p.Body, "…") {
		t.Fatalf("payload %d bytes, body ends %q", b, p.Body[len(p.Body)-5:])
	}
	ch := push.New(newKeys(t), "https://gh.example", notify.HTTPClient(true, 5*time.Second))
	if _, err := ch.Send(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	svc.Next(t, wait)
}

type settings map[string]string

func (s settings) EnsureSetting(_ context.Context, key, value string) (string, error) {
	if v, ok := s[key]; ok {
		return v, nil
	}
	s[key] = value
	return value, nil
}

func TestEnsureKeysKeepsTheFirstPair(t *testing.T) {
	st := settings{}
	var mu sync.Mutex
	locked := lockedStore{st: st, mu: &mu}
	first, err := push.EnsureKeys(context.Background(), locked)
	if err != nil {
		t.Fatal(err)
	}
	again, err := push.EnsureKeys(context.Background(), locked)
	if err != nil || again != first {
		t.Fatalf("second start got %+v (%v), want %+v", again, err, first)
	}
	// The kept pair signs pushes the push service verifies.
	svc := pushtest.NewService(t)
	svc.ExpectVAPIDKey(first.Public)
	ch := push.New(again, "https://gh.example", notify.HTTPClient(true, 5*time.Second))
	if _, err := ch.Send(context.Background(), message(notify.KindCreated, svc.NewSubscription())); err != nil {
		t.Fatal(err)
	}
	svc.Next(t, wait)
}

type lockedStore struct {
	st settings
	mu *sync.Mutex
}

func (l lockedStore) EnsureSetting(ctx context.Context, key, value string) (string, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.st.EnsureSetting(ctx, key, value)
}

func jsonLen(p push.Payload) (int, error) {
	b, err := json.Marshal(p)
	return len(b), err
}
