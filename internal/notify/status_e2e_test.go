package notify_test

import (
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
	"github.com/gatehouse-dev/gatehouse/internal/testkit/webhooktest"
)

// TestDeliveryErrorDetailOnlyToItsRecipient: a delivery that fails to connect shows
// its error (address, "connection refused") to the person it is for, and to everyone
// else who can see the prompt — a read-level grantee, the session's owner — only
// "delivery failed": in the API, on the approval page and on the session page.
func TestDeliveryErrorDetailOnlyToItsRecipient(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		srv := startNotifying(t, db)
		alice, bob, carol := srv.Client("alice@example.com"), srv.Client("bob@example.com"), srv.Client("carol@example.com")
		sid := alice.CreateSession(t, alice.CreateAgent(t), "", "probe")
		grant(t, alice, sid, "bob@example.com", "edit")
		grant(t, alice, sid, "carol@example.com", "read")

		// Bob's webhook points at a port nobody listens on.
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		closed := ln.Addr().String()
		ln.Close()
		putSettings(t, bob, map[string]any{"webhook": map[string]any{"url": "http://" + closed + "/hook", "secret": webhooktest.NewSecret()}})

		_, eid, _ := alice.ParkClaude(t, sid, sid, "Bash", map[string]any{"command": "make deploy"})
		var detail string
		waitDeliveries(t, bob, sid, eid, func(ds []map[string]any) bool {
			for _, d := range ds {
				if d["person"] == "bob@example.com" {
					detail, _ = d["last_error"].(string)
				}
			}
			return detail != ""
		})
		if !strings.Contains(detail, closed) {
			t.Fatalf("bob's own delivery error %q does not name where it failed (%s)", detail, closed)
		}
		for c, pages := range map[*testserver.Client][]string{
			carol: {"/sessions/" + sid}, // a read-level grantee has no approval page
			alice: {"/approve/" + sid + "/" + eid, "/sessions/" + sid},
		} {
			for _, d := range deliveries(t, c, sid, eid) {
				if d["person"] == "bob@example.com" && d["last_error"] != "delivery failed" {
					t.Errorf("%s reads bob's delivery error %q; want \"delivery failed\"", c.User, d["last_error"])
				}
			}
			for _, page := range pages {
				r := c.Do(t, http.MethodGet, page, nil)
				if r.Status != http.StatusOK {
					t.Fatalf("%s %s: %d", c.User, page, r.Status)
				}
				if body := string(r.Body); strings.Contains(body, closed) || strings.Contains(body, "refused") ||
					!strings.Contains(body, "delivery failed") {
					t.Errorf("%s's %s shows bob's delivery error detail, or not \"delivery failed\"", c.User, page)
				}
			}
		}
		for _, page := range []string{"/approve/" + sid + "/" + eid, "/sessions/" + sid} {
			if r := bob.Do(t, http.MethodGet, page, nil); !strings.Contains(string(r.Body), closed) {
				t.Errorf("bob's %s does not show his own delivery's error", page)
			}
		}
	})
}
