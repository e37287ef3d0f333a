package runner_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/gatehouse-dev/gatehouse/internal/runner"
)

func TestNewRefusesNonHTTPURLs(t *testing.T) {
	for _, u := range []string{"", "runner:8080", "ftp://x", "http://"} {
		if _, err := runner.New(u, nil); err == nil {
			t.Errorf("%q accepted", u)
		}
	}
}

// TestExecute: the request goes to {base}/v1/sessions/{sid}/mcp/execute as JSON;
// non-2xx and non-JSON answers are *runner.Error with a client-safe message.
func TestExecute(t *testing.T) {
	var gotPath, gotBody, gotType string
	status, answer := http.StatusOK, `{"result":{"output":"ok"}}`
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		gotPath, gotBody, gotType = r.URL.EscapedPath(), string(b), r.Header.Get("Content-Type")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, answer)
	}))
	defer ts.Close()
	c, err := runner.New(ts.URL+"/base/", nil)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := c.Execute(context.Background(), "conv_1", "tools/list", map[string]any{})
	if err != nil || string(raw) != answer {
		t.Fatalf("execute: %s %v", raw, err)
	}
	if gotPath != "/base/v1/sessions/conv_1/mcp/execute" || gotBody != `{"method":"tools/list","params":{}}` || gotType != "application/json" {
		t.Fatalf("request: %s %s %s", gotPath, gotBody, gotType)
	}
	if err := c.PostEvent(context.Background(), "conv_1", map[string]any{"type": "interrupt"}); err != nil || gotPath != "/base/v1/sessions/conv_1/events" {
		t.Fatalf("post event: %v %s", err, gotPath)
	}

	var re *runner.Error
	status, answer = http.StatusBadGateway, `{"error":"boom"}`
	if _, err := c.Execute(context.Background(), "conv_1", "tools/list", nil); !errors.As(err, &re) || re.Status != 502 || re.Msg != "the runner answered HTTP 502" {
		t.Fatalf("502: %v", err)
	}
	status, answer = http.StatusOK, `<html>`
	if _, err := c.Execute(context.Background(), "conv_1", "tools/list", nil); !errors.As(err, &re) {
		t.Fatalf("non-JSON: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := c.Execute(ctx, "conv_1", "tools/list", nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
}
