package webhooktest_test

import (
	"bytes"
	"net/http"
	"strconv"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/gatehouse-dev/gatehouse/internal/testkit/webhooktest"
)

const wait = 5 * time.Second

// post sends a delivery signed with secret, as any Standard Webhooks sender would.
func post(t *testing.T, client *http.Client, url, secret, id string) (int, error) {
	t.Helper()
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	body := []byte(`{"type":"elicitation.created","timestamp":"2026-01-01T00:00:00Z","data":{"session_id":"s","elicitation_id":"e"}}`)
	now := time.Now()
	sig, _ := wh.Sign(id, now, body)
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	req.Header.Set("webhook-id", id)
	req.Header.Set("webhook-timestamp", strconv.FormatInt(now.Unix(), 10))
	req.Header.Set("webhook-signature", sig)
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

func TestFailNextCountsDown(t *testing.T) {
	rcv := webhooktest.New(t, "")
	rcv.FailNext(2, webhooktest.Status(500))
	var got []int
	for range 3 {
		code, err := post(t, http.DefaultClient, rcv.URL, rcv.Secret, "msg_1")
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, code)
	}
	if got[0] != 500 || got[1] != 500 || got[2] != 204 {
		t.Errorf("answers %v, want 500 500 204", got)
	}
	if rcv.Attempts("msg_1") != 3 || rcv.Count("msg_1") != 1 || len(rcv.Deliveries()) != 1 {
		t.Errorf("attempts %d, accepted %d", rcv.Attempts("msg_1"), rcv.Count("msg_1"))
	}
	if d := rcv.Deliveries()[0]; d.Type != "elicitation.created" || d.Data.ElicitationID != "e" {
		t.Errorf("delivery = %+v", d)
	}
}

func TestWrongSecretIsRejected(t *testing.T) {
	rcv := webhooktest.New(t, "")
	code, err := post(t, http.DefaultClient, rcv.URL, webhooktest.NewSecret(), "msg_1")
	if err != nil || code != http.StatusUnauthorized {
		t.Fatalf("post with another secret = %d, %v, want 401", code, err)
	}
	rcv.WaitRejection(t, wait)
	if rcv.Attempts("msg_1") != 0 || len(rcv.Deliveries()) != 0 {
		t.Error("an unverified request was counted")
	}
}

// TestCloseReleasesHangingRequests: a hanging receiver must not keep a test (or its
// cleanup) waiting once it is closed.
func TestCloseReleasesHangingRequests(t *testing.T) {
	rcv := webhooktest.New(t, "")
	rcv.FailAlways(webhooktest.Hang(time.Hour))
	done := make(chan int, 1)
	go func() {
		code, _ := post(t, http.DefaultClient, rcv.URL, rcv.Secret, "msg_h")
		done <- code
	}()
	rcv.WaitAttempts(t, "msg_h", 1, wait)
	rcv.Close()
	select {
	case code := <-done:
		if code != http.StatusServiceUnavailable {
			t.Errorf("released request answered %d, want 503", code)
		}
	case <-time.After(wait):
		t.Fatal("Close did not release the hanging request")
	}
}
