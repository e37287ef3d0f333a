package handlers_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
)

// canonJSON re-encodes a JSON body with sorted keys, so answers compare as strings.
func canonJSON(t testing.TB, body []byte) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("body is not JSON: %v: %q", err, body)
	}
	out, _ := json.Marshal(v)
	return string(out)
}

// pendingOf lists a session's pending_elicitations (an absent or null list is empty).
func pendingOf(t testing.TB, c *testserver.Client, sid string) []any {
	t.Helper()
	r := c.Do(t, http.MethodGet, "/v1/sessions/"+sid, nil)
	if r.Status != http.StatusOK {
		t.Fatalf("get session %s: %d %s", sid, r.Status, r.Body)
	}
	list, _ := r.JSON(t)["pending_elicitations"].([]any)
	return list
}

// mustJSON renders v for failure messages.
func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
