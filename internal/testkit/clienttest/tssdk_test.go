package clienttest

import (
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
)

// tsCase is one TypeScript client configuration and what the proxy must hand it on ASK.
type tsCase struct {
	name     string
	pkg      string   // npm package the script needs
	args     []string // script and arguments after the endpoint
	version  string   // protocol revision it must negotiate
	handedBy string   // "url_required" (-32042), "elicitation" (url or form), or "held" (SSE kept open)
	mode     string   // elicitation mode it must be asked in ("url" or "form"), for "elicitation"
	// personFirst: the person decides before the client answers/retries (the link was
	// followed and approved, then the client came back); otherwise the client answers at
	// once and its retry must wait for the person.
	personFirst bool
}

var tsCases = []tsCase{
	{name: "sdk1/url", pkg: "@modelcontextprotocol/sdk", args: []string{"sdk1.mjs", "form,url"},
		version: "2025-11-25", handedBy: "url_required", personFirst: true},
	{name: "sdk1/form-only", pkg: "@modelcontextprotocol/sdk", args: []string{"sdk1.mjs", "form"},
		version: "2025-11-25", handedBy: "held"},
	{name: "client2-auto/url", pkg: "@modelcontextprotocol/client", args: []string{"client2.mjs", "form,url", "auto"},
		version: "2026-07-28", handedBy: "elicitation", mode: "url"},
	{name: "client2-auto/form-only", pkg: "@modelcontextprotocol/client", args: []string{"client2.mjs", "form", "auto"},
		version: "2026-07-28", handedBy: "elicitation", mode: "form", personFirst: true},
	{name: "client2-legacy/url", pkg: "@modelcontextprotocol/client", args: []string{"client2.mjs", "form,url", "legacy"},
		version: "2025-11-25", handedBy: "url_required"},
	{name: "client2-legacy/form-only", pkg: "@modelcontextprotocol/client", args: []string{"client2.mjs", "form", "legacy"},
		version: "2025-11-25", handedBy: "held"},
}

// TestTypeScriptClients: @modelcontextprotocol/sdk 1.32.2 and @modelcontextprotocol/client
// 2.4.0 (both negotiation modes), with and without URL elicitation, run by node against
// the real server. Each gets the answer its revision and capabilities call for (-32042
// with an absolute link, a 2026-07-28 input request, or a held SSE response), the person
// decides on the approval page, and the client ends with the tool's output from exactly
// one run — or an error result naming the decline, and no run — from one prompt.
func TestTypeScriptClients(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		for _, tc := range tsCases {
			for _, action := range []string{"accept", "decline"} {
				t.Run(tc.name+"/"+action, func(t *testing.T) { tsDeploy(t, startProxy(t, db), tc, action) })
			}
		}
	})
}

func tsDeploy(t *testing.T, p *proxy, tc tsCase, action string) {
	s := startScript(t, tc.pkg, tc.args[0], append([]string{p.endpoint}, tc.args[1:]...)...)
	hello := s.expect(t, "connected", 30*time.Second)
	if hello["protocolVersion"] != tc.version {
		t.Errorf("negotiated %v, want %s", hello["protocolVersion"], tc.version)
	}
	if tools, _ := hello["tools"].([]any); len(tools) != 1 || tools[0] != "deploy" {
		t.Errorf("tools/list = %v", hello["tools"])
	}

	var eid string
	if tc.handedBy == "held" {
		eid = p.waitPrompt(t)
		s.quiet(t, "the call must be held open until the person decides")
		p.decide(t, eid, action)
	} else {
		handed := s.expect(t, tc.handedBy, 30*time.Second)
		eid = p.waitPrompt(t)
		checkHanded(t, p, tc, handed, eid)
		if tc.personFirst {
			p.decide(t, eid, action)
			s.send(t, action)
		} else {
			s.send(t, action)
			p.decide(t, eid, action)
		}
	}

	res := s.expect(t, "result", 60*time.Second)
	result, _ := res["result"].(map[string]any)
	isError, _ := result["isError"].(bool)
	var text strings.Builder
	content, _ := result["content"].([]any)
	for _, c := range content {
		if c, ok := c.(map[string]any); ok && c["type"] == "text" {
			text.WriteString(c["text"].(string))
		}
	}
	checkToolResult(t, isError, text.String(), action)
	p.checkOutcome(t, eid, action)
	t.Logf("attempts %v, progress notifications %v", res["attempts"], res["progress"])
}

// checkHanded checks the request a client was handed for prompt eid.
func checkHanded(t *testing.T, p *proxy, tc tsCase, handed map[string]any, eid string) {
	t.Helper()
	if tc.handedBy == "url_required" {
		list, _ := handed["elicitations"].([]any)
		if len(list) != 1 {
			t.Fatalf("-32042 elicitations = %v, want one", handed["elicitations"])
		}
		e, _ := list[0].(map[string]any)
		if msg, _ := e["message"].(string); e["mode"] != "url" || msg == "" || e["elicitationId"] == nil {
			t.Errorf("-32042 elicitation = %v", e)
		}
		url, _ := e["url"].(string)
		p.checkURL(t, url, eid)
		return
	}
	params, _ := handed["params"].(map[string]any)
	if msg, _ := params["message"].(string); params["mode"] != tc.mode || msg == "" {
		t.Errorf("elicitation params = %v, want mode %s", params, tc.mode)
	}
	if tc.mode == "url" {
		url, _ := params["url"].(string)
		p.checkURL(t, url, eid)
		for _, k := range []string{"elicitationId", "requestedSchema"} {
			if _, ok := params[k]; ok {
				t.Errorf("2026-07-28 URL-mode params carry %s: %v", k, params)
			}
		}
		return
	}
	schema, _ := params["requestedSchema"].(map[string]any)
	props, _ := schema["properties"].(map[string]any)
	if approved, _ := props["approved"].(map[string]any); approved["type"] != "boolean" {
		t.Errorf("form requestedSchema = %v, want an approved boolean", params["requestedSchema"])
	}
}
