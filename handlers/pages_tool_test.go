package handlers_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
)

// TestToolCardsOnPages: against the real server, the inbox and session cards and the
// approval page show each tool in its own terms (a command with its description and
// cwd, a file with its diff, a fetch's host, a Codex patch's diffs), never the raw
// JSON preview with its \n escapes.
func TestToolCardsOnPages(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		srv := testserver.Start(t, db.NewURL(t))
		c := srv.Client("")
		b := newBrowser(t, srv, "")
		sid := c.CreateSession(t, c.CreateAgent(t), "", "tools")

		bash, eb, _ := c.ParkClaude(t, sid, sid, "Bash", map[string]any{"command": "go test ./...\ngo vet ./...", "description": "Run the tests"})
		defer bash.Cancel()
		edit, ee, _ := c.ParkClaude(t, sid, sid, "Edit", map[string]any{"file_path": "/repo/main.go",
			"old_string": "a := 1\nb := 2", "new_string": "a := 1\nb := 3", "replace_all": false})
		defer edit.Cancel()
		fetch, ef, _ := c.ParkClaude(t, sid, sid, "WebFetch", map[string]any{"url": "https://exämple.com/docs", "prompt": "Read the docs"})
		defer fetch.Cancel()
		patch := map[string]any{"id": 7, "method": "applyPatchApproval", "params": map[string]any{"conversationId": "c1", "callId": "call2",
			"fileChanges": map[string]any{"a.go": map[string]any{"type": "update", "unified_diff": "@@ -1,2 +1,2 @@\n package a\n-var v = 1\n+var v = 2\n"}},
			"reason":      "bump v"}}
		codex, ec, _ := c.ParkAt(t, sid, codexPath(sid), patch)
		defer codex.Cancel()

		for _, path := range []string{"/inbox", "/sessions/" + sid} {
			p := b.get(t, path)
			mustStatus(t, p, http.StatusOK)
			card := func(eid string) *goquery.Selection {
				return p.Doc.Find(`[data-testid="card"][data-eid="` + eid + `"]`)
			}
			if cmd := card(eb).Find(`[data-testid="card-command"]`).Text(); cmd != "go test ./...\ngo vet ./..." ||
				!strings.Contains(card(eb).Text(), "Run the tests") || card(eb).Find(`[data-testid="card-approve"]`).Length() != 1 {
				t.Errorf("%s: bash card %q", path, card(eb).Text())
			}
			e := card(ee)
			if e.Find(`[data-testid="diff-path"]`).Text() != "/repo/main.go" || e.Find("tr.d-del .tx").Text() != "b := 2" || e.Find("tr.d-add .tx").Text() != "b := 3" {
				t.Errorf("%s: edit card %q", path, e.Text())
			}
			if h := card(ef).Find(`[data-testid="fetch-host"]`).Text(); h != "xn--exmple-cua.com" {
				t.Errorf("%s: fetch host %q", path, h)
			}
			if card(ec).Find("tr.d-add .tx").Text() != "var v = 2" {
				t.Errorf("%s: codex patch card %q", path, card(ec).Text())
			}
			for _, eid := range []string{eb, ee, ef, ec} {
				if strings.Contains(card(eid).Text(), `\n`) || card(eid).Find(`[data-testid="card-preview"]`).Length() != 0 {
					t.Errorf("%s: card %s shows the raw preview: %q", path, eid, card(eid).Text())
				}
			}
		}

		p := b.get(t, "/approve/"+sid+"/"+ee)
		mustStatus(t, p, http.StatusOK)
		if p.testid("diff-file").Length() != 1 || p.testid("tool-input").Length() != 0 || p.Doc.Find("tr.d-del").Length() != 1 {
			t.Errorf("approve page lacks the diff:\n%.3000s", p.Body)
		}
		p = b.get(t, "/approve/"+sid+"/"+ec)
		if p.Doc.Find(`[data-testid="diff-path"]`).Text() != "a.go" || p.Doc.Find("tr.d-add .ln").Eq(1).Text() != "2" {
			t.Errorf("codex patch page:\n%.3000s", p.Body)
		}
	})
}
