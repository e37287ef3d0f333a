package handlers_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
)

// TestBadInputIsA4xxEnvelope sends malformed requests to every core POST/PUT/DELETE route:
// each is a 4xx with exactly the error envelope (never a 5xx or a hang), nothing is
// parked, and the server keeps answering /healthz.
func TestBadInputIsA4xxEnvelope(t *testing.T) {
	t.Parallel()
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		srv := testserver.Start(t, db.NewURL(t))
		c := srv.Client("")
		agent := c.CreateAgent(t)
		sid := c.CreateSession(t, agent, "", "")
		st := coreOpenStream(t, c, sid)
		eid := "elicit_" + strings.Repeat("ab", 16)

		hook := coreHookPath(sid)
		events := "/v1/sessions/" + sid + "/events"
		resolve := coreResolvePath(sid, eid)
		perms := "/v1/sessions/" + sid + "/permissions"
		bigCommand := strings.Repeat("x", 3<<20)
		big := `{"tool_name":"Bash","tool_input":{"command":"` + bigCommand + `"},"name":"` + bigCommand + `"}`

		const (
			jsonCT = "application/json"
			formCT = "application/x-www-form-urlencoded"
		)
		type tc struct {
			name   string
			method string
			path   string
			ct     string
			body   string
			status int
			code   string
		}
		var cases []tc
		post := func(name, path, body string, status int, code string) {
			cases = append(cases, tc{name, http.MethodPost, path, jsonCT, body, status, code})
		}
		// Every body-taking route: form posts, plain text, oversized bodies, malformed
		// session ids.
		for _, r := range []struct {
			method, path string
			badSession   string
		}{
			{http.MethodPost, "/v1/agents", ""},
			{http.MethodPost, "/v1/sessions", ""},
			{http.MethodPost, hook, coreHookPath("conv_nope")},
			{http.MethodPost, events, "/v1/sessions/not-a-session/events"},
			{http.MethodPost, resolve, coreResolvePath("conv_../../etc", eid)},
			{http.MethodPut, perms, "/v1/sessions/CONV_X/permissions"},
		} {
			cases = append(cases,
				tc{"form " + r.path, r.method, r.path, formCT, "action=accept&name=x", http.StatusUnsupportedMediaType, "unsupported_media_type"},
				tc{"text " + r.path, r.method, r.path, "text/plain", `{"action":"accept"}`, http.StatusUnsupportedMediaType, "unsupported_media_type"},
				tc{"no content type " + r.path, r.method, r.path, "", `{"action":"accept"}`, http.StatusUnsupportedMediaType, "unsupported_media_type"},
				tc{"3 MiB " + r.path, r.method, r.path, jsonCT, big, http.StatusRequestEntityTooLarge, "payload_too_large"},
			)
			if r.badSession != "" {
				cases = append(cases, tc{"malformed session " + r.badSession, r.method, r.badSession, jsonCT,
					`{"action":"accept","tool_name":"Bash","tool_input":{},"type":"interrupt","user":"bob","level":"read"}`,
					http.StatusNotFound, "not_found"})
			}
		}

		// Claude PermissionRequest hook.
		post("hook not JSON", hook, `this is not json`, 400, "invalid_input")
		post("hook empty body", hook, ``, 400, "invalid_input")
		post("hook JSON array", hook, `[{"tool_name":"Bash"}]`, 400, "invalid_input")
		post("hook tool_name number", hook, `{"tool_name":42,"tool_input":{}}`, 400, "invalid_input")
		post("hook tool_input string", hook, `{"tool_name":"Bash","tool_input":"ls -la"}`, 400, "invalid_input")
		post("hook tool_input list", hook, `{"tool_name":"Bash","tool_input":["ls"]}`, 400, "invalid_input")
		post("hook tool_input null", hook, `{"tool_name":"Bash","tool_input":null}`, 400, "invalid_input")
		post("hook missing tool_name", hook, `{"tool_input":{"command":"ls"}}`, 400, "invalid_input")
		post("hook blank tool_name", hook, `{"tool_name":"  ","tool_input":{"command":"ls"}}`, 400, "invalid_input")
		post("hook cwd object", hook, `{"tool_name":"Bash","tool_input":{},"cwd":{"a":1}}`, 400, "invalid_input")
		post("hook truncated JSON", hook, `{"tool_name":"Bash","tool_input":{"command":"ls"`, 400, "invalid_input")
		post("hook bad re-attach id", hook, `{"tool_name":"Bash","tool_input":{},"_gatehouse_elicitation_id":"elicit_x"}`, 400, "invalid_input")
		post("hook unknown session", coreHookPath("conv_"+strings.Repeat("0", 32)), `{"tool_name":"Bash","tool_input":{}}`, 404, "not_found")

		// Control events.
		post("event not JSON", events, `{type: approval}`, 400, "invalid_input")
		post("event unknown type", events, `{"type":"launch_missiles","data":{}}`, 400, "invalid_input")
		post("event missing type", events, `{"data":{}}`, 400, "invalid_input")
		post("event type number", events, `{"type":7}`, 400, "invalid_input")
		post("approval without data", events, `{"type":"approval"}`, 422, "validation_failed")
		post("approval data string", events, `{"type":"approval","data":"accept"}`, 422, "validation_failed")
		post("approval without id", events, `{"type":"approval","data":{"action":"accept"}}`, 422, "validation_failed")
		post("approval id number", events, `{"type":"approval","data":{"elicitation_id":5,"action":"accept"}}`, 422, "validation_failed")
		post("approval bad action", events, `{"type":"approval","data":{"elicitation_id":"`+eid+`","action":"approve"}}`, 422, "validation_failed")
		post("approval missing action", events, `{"type":"approval","data":{"elicitation_id":"`+eid+`"}}`, 422, "validation_failed")
		post("approval nested content", events, `{"type":"approval","data":{"elicitation_id":"`+eid+`","action":"accept","content":{"a":{"b":1}}}}`, 422, "validation_failed")
		post("mcp_elicitation without message", events, `{"type":"mcp_elicitation","data":{}}`, 400, "invalid_input")
		post("mcp_elicitation schema string", events, `{"type":"mcp_elicitation","data":{"message":"m","requestedSchema":"x"}}`, 400, "invalid_input")
		post("mcp_elicitation data list", events, `{"type":"mcp_elicitation","data":[1]}`, 400, "invalid_input")

		// Resolve URL: anything but an ElicitationResult is 422.
		post("resolve not JSON", resolve, `accept`, 422, "validation_failed")
		post("resolve empty", resolve, ``, 422, "validation_failed")
		post("resolve JSON list", resolve, `["accept"]`, 422, "validation_failed")
		post("resolve missing action", resolve, `{"content":{"a":"b"}}`, 422, "validation_failed")
		post("resolve action number", resolve, `{"action":1}`, 422, "validation_failed")
		post("resolve action upper case", resolve, `{"action":"ACCEPT"}`, 422, "validation_failed")
		post("resolve nested object content", resolve, `{"action":"accept","content":{"db":{"name":"pg"}}}`, 422, "validation_failed")
		post("resolve content list of numbers", resolve, `{"action":"accept","content":{"ports":[80,443]}}`, 422, "validation_failed")
		post("resolve content list of objects", resolve, `{"action":"accept","content":{"x":[{"a":1}]}}`, 422, "validation_failed")
		post("resolve content null value", resolve, `{"action":"accept","content":{"x":null}}`, 422, "validation_failed")
		post("resolve content string", resolve, `{"action":"accept","content":"yes"}`, 422, "validation_failed")
		post("resolve content list", resolve, `{"action":"accept","content":["yes"]}`, 422, "validation_failed")

		// Agents and sessions.
		post("agent not JSON", "/v1/agents", `name=x`, 400, "invalid_input")
		post("agent name number", "/v1/agents", `{"name":5}`, 400, "invalid_input")
		post("agent without name", "/v1/agents", `{"description":"d"}`, 400, "invalid_input")
		post("agent config string", "/v1/agents", `{"name":"a","config":"x"}`, 400, "invalid_input")
		post("session not JSON", "/v1/sessions", `}`, 400, "invalid_input")
		post("session agent_id number", "/v1/sessions", `{"agent_id":1}`, 400, "invalid_input")
		post("session without agent", "/v1/sessions", `{"title":"t"}`, 400, "invalid_input")
		post("session unknown agent", "/v1/sessions", `{"agent_id":"agent_`+strings.Repeat("0", 32)+`"}`, 404, "not_found")
		post("session malformed agent", "/v1/sessions", `{"agent_id":"bogus"}`, 404, "not_found")
		post("session parent number", "/v1/sessions", `{"agent_id":"`+agent+`","parent_session_id":3}`, 400, "invalid_input")
		post("session unknown parent", "/v1/sessions", `{"agent_id":"`+agent+`","parent_session_id":"conv_`+strings.Repeat("1", 32)+`"}`, 404, "not_found")

		// Text the databases cannot store alike: U+0000 (Postgres refuses it, SQLite
		// keeps it) and bytes that are not UTF-8. A 400 on both, never a 500 on one.
		nul := `\u0000`
		post("hook NUL in tool input", hook, `{"tool_name":"Bash","tool_input":{"command":"a`+nul+`b"}}`, 400, "invalid_input")
		post("hook NUL in tool name", hook, `{"tool_name":"Ba`+nul+`sh","tool_input":{}}`, 400, "invalid_input")
		post("hook invalid UTF-8", hook, "{\"tool_name\":\"Bash\",\"tool_input\":{\"command\":\"\xff\xfe\"}}", 400, "invalid_input")
		post("mcp_elicitation NUL message", events, `{"type":"mcp_elicitation","data":{"message":"m`+nul+`"}}`, 400, "invalid_input")
		post("resolve NUL content", resolve, `{"action":"accept","content":{"note":"`+nul+`"}}`, 400, "invalid_input")
		post("agent NUL name", "/v1/agents", `{"name":"a`+nul+`"}`, 400, "invalid_input")
		post("agent invalid UTF-8 config", "/v1/agents", "{\"name\":\"a\",\"config\":{\"k\":\"\xff\"}}", 400, "invalid_input")
		post("session NUL title", "/v1/sessions", `{"agent_id":"`+agent+`","title":"t`+nul+`"}`, 400, "invalid_input")
		cases = append(cases,
			tc{"permission NUL user", http.MethodPut, perms, jsonCT, `{"user":"b` + nul + `ob","level":"read"}`, 400, "invalid_input"},
			tc{"delete permission NUL user", http.MethodDelete, perms + "?user=b%00ob", "", "", 400, "invalid_input"},
			tc{"delete permission invalid UTF-8 user", http.MethodDelete, perms + "?user=b%FFob", "", "", 400, "invalid_input"},
		)

		// Permissions.
		for _, p := range []struct{ name, body string }{
			{"level unknown", `{"user":"bob@example.com","level":"god"}`},
			{"level owner", `{"user":"bob@example.com","level":"owner"}`},
			{"user missing", `{"level":"read"}`},
			{"user local", `{"user":"local","level":"read"}`},
			{"level number", `{"user":"bob@example.com","level":2}`},
		} {
			cases = append(cases, tc{"permission " + p.name, http.MethodPut, perms, jsonCT, p.body, 400, "invalid_input"})
		}
		cases = append(cases,
			tc{"delete permission without user", http.MethodDelete, perms, jsonCT, `{}`, 400, "invalid_input"},
			tc{"delete unknown grant", http.MethodDelete, perms + "?user=nobody@example.com", "", "", 404, "not_found"},
		)

		for _, k := range cases {
			r, err := c.SendRaw(context.Background(), k.method, k.path, k.ct, []byte(k.body))
			if err != nil {
				t.Fatalf("%s: %v", k.name, err)
			}
			if r.Status != k.status {
				t.Errorf("%s: %d %s, want %d", k.name, r.Status, truncateForLog(r.Body), k.status)
				continue
			}
			coreWantEnvelope(t, r, k.status, k.code)
		}

		// An oversized body without Content-Length (chunked) is cut off while reading.
		for _, path := range []string{hook, resolve, events} {
			req, _ := http.NewRequest(http.MethodPost, c.Base+path, io.MultiReader(strings.NewReader(big)))
			req.Header.Set("Content-Type", jsonCT)
			resp, err := c.HC.Do(req)
			if err != nil {
				t.Fatalf("chunked %s: %v", path, err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			coreWantEnvelope(t, &testserver.Response{Status: resp.StatusCode, Header: resp.Header, Body: body},
				http.StatusRequestEntityTooLarge, "payload_too_large")
		}

		// None of it parked a prompt or reached the stream.
		if n := len(coreSessionPending(t, c, sid)); n != 0 {
			t.Fatalf("bad input left %d pending prompts", n)
		}
		for _, f := range coreUntilSentinel(t, c, st, sid) {
			if f.Event != "session.heartbeat" {
				t.Fatalf("bad input published %s %s", f.Event, f.Data)
			}
		}
		coreHealthy(t, c)
		// And the real thing still works afterwards — including a backslash followed by
		// "u0000" as plain text, which is not a NUL.
		cmd := `printf '\u0000' | od -c`
		parked, ev := corePark(t, c, st, sid, testserver.ClaudeBody("AskUserQuestion", map[string]any{"command": cmd}))
		if in := coreParams(t, ev)["tool_input"].(map[string]any); in["command"] != cmd {
			t.Fatalf("tool_input = %v", in)
		}
		coreMustResolve(t, c, sid, ev["elicitation_id"].(string), map[string]any{"action": "accept", "content": map[string]any{"q": `a\u0000b`}})
		d := coreWantBehavior(t, parked, "allow")
		if in, _ := d["updatedInput"].(map[string]any); in["command"] != cmd || !jsonEqual(in["answers"], map[string]any{"q": `a\u0000b`}) {
			t.Fatalf("updatedInput = %v", d["updatedInput"])
		}
	})
}

func truncateForLog(b []byte) string {
	if len(b) > 300 {
		return string(b[:300]) + "…"
	}
	return string(b)
}
