package codex

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/models"
)

// Realistic request bodies, as Codex 0.171's app-server sends them (PROTOCOLS.md).
func fixtures() map[string]string {
	return map[string]string{
		MethodCommandApproval:    `{"id":7,"method":"item/commandExecution/requestApproval","params":{"threadId":"thread_1","turnId":"turn_1","itemId":"item_cmd","command":["git","push","--force"],"cwd":"/repo","reason":"Push the fix"}}`,
		MethodFileChangeApproval: `{"id":"req-8","method":"item/fileChange/requestApproval","params":{"threadId":"thread_1","turnId":"turn_1","itemId":"item_patch","reason":"Write the migration","grantRoot":"/repo/migrations"}}`,
		MethodPermissions:        `{"id":9,"method":"item/permissions/requestApproval","params":{"threadId":"thread_1","turnId":"turn_1","itemId":"item_perm","cwd":"/repo","reason":"Needs the network to fetch modules","permissions":{"network":{"enabled":true}}}}`,
		MethodRequestUserInput: `{"id":10,"method":"item/tool/requestUserInput","params":{"threadId":"thread_1","turnId":"turn_1","itemId":"item_q","questions":[
		{"id":"db","header":"Database","question":"Which database should the worker target?","isOther":true,"isSecret":false,"options":[{"label":"postgres","description":"the shared cluster"},{"label":"sqlite","description":"a local file"}]},
		{"id":"langs","header":"Languages","question":"Which languages?","isOther":false,"isSecret":false,"options":null}]}}`,
		MethodMCPElicitation: `{"id":11,"method":"mcpServer/elicitation/request","params":{"threadId":"thread_1","turnId":"turn_1","serverName":"deploy","mode":"form","message":"Which environment?","requestedSchema":{"type":"object","properties":{"env":{"type":"string","enum":["staging","prod"]}},"required":["env"]}}}`,
		MethodExecCommand:    `{"id":12,"method":"execCommandApproval","params":{"conversationId":"conv_x","callId":"call_1","command":["rm","-rf","build"],"cwd":"/repo","reason":"clean"}}`,
		MethodApplyPatch:     `{"id":13,"method":"applyPatchApproval","params":{"conversationId":"conv_x","callId":"call_2","fileChanges":{"b.go":{"type":"update"},"a.go":{"type":"add"}},"reason":"refactor","grantRoot":null}}`,
	}
}

const urlElicitation = `{"id":14,"method":"mcpServer/elicitation/request","params":{"serverName":"github","mode":"url","message":"Sign in to GitHub","url":"https://github.com/login/device","elicitationId":"el_1"}}`

func mustDecode(t *testing.T, body string) *Request {
	t.Helper()
	r, err := Decode([]byte(body))
	if err != nil {
		t.Fatalf("Decode: %v", err)
	}
	return r
}

func asJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestAnswerPerMethodAndAction pins the JSON-RPC result for every method × action.
func TestAnswerPerMethodAndAction(t *testing.T) {
	remember := map[string]any{"remember": true}
	cases := []struct {
		method  string
		body    string
		action  string
		content map[string]any
		want    string
	}{
		{MethodCommandApproval, "", "accept", nil, `{"decision":"accept"}`},
		{MethodCommandApproval, "", "accept", remember, `{"decision":"acceptForSession"}`},
		{MethodCommandApproval, "", "decline", nil, `{"decision":"decline"}`},
		{MethodCommandApproval, "", "decline", remember, `{"decision":"decline"}`},
		{MethodCommandApproval, "", "cancel", nil, `{"decision":"cancel"}`},
		{MethodFileChangeApproval, "", "accept", nil, `{"decision":"accept"}`},
		{MethodFileChangeApproval, "", "accept", remember, `{"decision":"acceptForSession"}`},
		{MethodFileChangeApproval, "", "decline", nil, `{"decision":"decline"}`},
		{MethodFileChangeApproval, "", "cancel", nil, `{"decision":"cancel"}`},
		{MethodPermissions, "", "accept", nil, `{"permissions":{"network":{"enabled":true}},"scope":"turn"}`},
		{MethodPermissions, "", "accept", remember, `{"permissions":{"network":{"enabled":true}},"scope":"session"}`},
		{MethodPermissions, "", "decline", nil, `{"permissions":{},"scope":"turn"}`},
		{MethodPermissions, "", "cancel", nil, `{"permissions":{},"scope":"turn"}`},
		{MethodRequestUserInput, "", "accept", map[string]any{"db": "postgres", "langs": []string{"Go", "SQL"}},
			`{"answers":{"db":{"answers":["postgres"]},"langs":{"answers":["Go","SQL"]}}}`},
		{MethodRequestUserInput, "", "accept", map[string]any{"Database": "sqlite"},
			`{"answers":{"db":{"answers":["sqlite"]}}}`},
		{MethodRequestUserInput, "", "accept", map[string]any{"Which languages?": "Go"},
			`{"answers":{"langs":{"answers":["Go"]}}}`},
		{MethodRequestUserInput, "", "accept", nil, `{"answers":{}}`},
		{MethodRequestUserInput, "", "decline", map[string]any{"db": "postgres"}, `{"answers":{}}`},
		{MethodRequestUserInput, "", "cancel", nil, `{"answers":{}}`},
		{MethodMCPElicitation, "", "accept", map[string]any{"env": "staging"},
			`{"_meta":null,"action":"accept","content":{"env":"staging"}}`},
		{MethodMCPElicitation, "", "accept", nil, `{"_meta":null,"action":"accept","content":{}}`},
		{MethodMCPElicitation, "", "decline", map[string]any{"env": "prod"}, `{"_meta":null,"action":"decline","content":null}`},
		{MethodMCPElicitation, "", "cancel", nil, `{"_meta":null,"action":"cancel","content":null}`},
		{MethodMCPElicitation, urlElicitation, "accept", nil, `{"_meta":null,"action":"accept","content":null}`},
		{MethodMCPElicitation, urlElicitation, "decline", nil, `{"_meta":null,"action":"decline","content":null}`},
		{MethodExecCommand, "", "accept", nil, `{"decision":"approved"}`},
		{MethodExecCommand, "", "accept", remember, `{"decision":"approved_for_session"}`},
		{MethodExecCommand, "", "decline", nil, `{"decision":"denied"}`},
		{MethodExecCommand, "", "cancel", nil, `{"decision":"abort"}`},
		{MethodApplyPatch, "", "accept", nil, `{"decision":"approved"}`},
		{MethodApplyPatch, "", "accept", remember, `{"decision":"approved_for_session"}`},
		{MethodApplyPatch, "", "decline", nil, `{"decision":"denied"}`},
		{MethodApplyPatch, "", "cancel", nil, `{"decision":"abort"}`},
	}
	for _, tc := range cases {
		body := tc.body
		if body == "" {
			body = fixtures()[tc.method]
		}
		r := mustDecode(t, body)
		got := asJSON(t, r.Answer(models.Verdict{Action: tc.action, Content: tc.content}))
		if got != tc.want {
			t.Errorf("%s %s %v:\n got %s\nwant %s", tc.method, tc.action, tc.content, got, tc.want)
		}
	}
}

// TestParamsPerMethod checks the common keys and each method's phase, message and extras.
func TestParamsPerMethod(t *testing.T) {
	cases := []struct {
		body, phase, message, preview string
		remember                      bool
		extras                        map[string]string // key → JSON
	}{
		{fixtures()[MethodCommandApproval], PhaseCommand, "Codex wants to run **git push --force**", "git push --force", true,
			map[string]string{"command": `"git push --force"`, "cwd": `"/repo"`, "reason": `"Push the fix"`, "threadId": `"thread_1"`,
				"turnId": `"turn_1"`, "itemId": `"item_cmd"`, "codex_request_id": `7`}},
		{fixtures()[MethodFileChangeApproval], PhaseFileChange, "Codex wants to change files under **/repo/migrations**", "Write the migration", true,
			map[string]string{"grantRoot": `"/repo/migrations"`, "reason": `"Write the migration"`, "codex_request_id": `"req-8"`}},
		{fixtures()[MethodPermissions], PhasePermissions, "Codex asks for more permissions", `{"network":{"enabled":true}}`, true,
			map[string]string{"permissions": `{"network":{"enabled":true}}`, "cwd": `"/repo"`}},
		{fixtures()[MethodRequestUserInput], PhaseUserInput, "Codex has 2 questions", "Which database should the worker target?\nWhich languages?", false,
			map[string]string{"ask_user_question": `{"questions":[` +
				`{"header":"Database","id":"db","isOther":true,"isSecret":false,"multiSelect":false,"options":[{"description":"the shared cluster","label":"postgres"},{"description":"a local file","label":"sqlite"}],"question":"Which database should the worker target?"},` +
				`{"header":"Languages","id":"langs","isOther":false,"isSecret":false,"multiSelect":false,"options":[],"question":"Which languages?"}]}`}},
		{fixtures()[MethodMCPElicitation], PhaseMCP, "Which environment?", "deploy: Which environment?", false,
			map[string]string{"server_name": `"deploy"`, "requestedSchema": `{"properties":{"env":{"enum":["staging","prod"],"type":"string"}},"required":["env"],"type":"object"}`}},
		{urlElicitation, PhaseMCP, "Sign in to GitHub", "github: https://github.com/login/device", false,
			map[string]string{"mode": `"url"`, "url": `"https://github.com/login/device"`, "elicitationId": `"el_1"`}},
		{fixtures()[MethodExecCommand], PhaseCommand, "Codex wants to run **rm -rf build**", "rm -rf build", true,
			map[string]string{"command": `"rm -rf build"`, "callId": `"call_1"`, "conversationId": `"conv_x"`}},
		{fixtures()[MethodApplyPatch], PhaseFileChange, "Codex wants to change 2 files", "a.go\nb.go", true,
			map[string]string{"fileChanges": `{"a.go":{"type":"add"},"b.go":{"type":"update"}}`}},
	}
	for _, tc := range cases {
		r := mustDecode(t, tc.body)
		p := r.PromptParams()
		t.Run(r.Method, func(t *testing.T) {
			want := map[string]any{"phase": tc.phase, "message": tc.message, "content_preview": tc.preview,
				"policy_name": "codex_app_server", "vendor": "Codex", "codex_method": r.Method, "allow_remember": tc.remember}
			if _, ok := tc.extras["mode"]; !ok {
				want["mode"] = "form"
			}
			for k, v := range want {
				if p[k] != v {
					t.Errorf("params[%q] = %#v, want %#v", k, p[k], v)
				}
			}
			for k, v := range tc.extras {
				if got := asJSON(t, p[k]); got != v {
					t.Errorf("params[%q] = %s, want %s", k, got, v)
				}
			}
			if _, ok := p["url"]; ok && p["mode"] != "url" {
				t.Errorf("a form prompt has a url key")
			}
		})
	}
}

func TestParamsFallbacksAndPreviewLimit(t *testing.T) {
	long := strings.Repeat("x", 3000)
	r := mustDecode(t, `{"id":1,"method":"item/commandExecution/requestApproval","params":{"command":"`+long+`"}}`)
	p := r.PromptParams()
	if n := len([]rune(p["content_preview"].(string))); n != PreviewLimit {
		t.Errorf("preview has %d characters, want %d", n, PreviewLimit)
	}
	if n := len([]rune(p["message"].(string))); n > 250 {
		t.Errorf("message has %d characters; the command should be clipped in it", n)
	}
	if p["command"] != long {
		t.Errorf("the full command must stay in the params")
	}
	r = mustDecode(t, `{"id":1,"method":"item/commandExecution/requestApproval","params":{"networkApprovalContext":{"host":"pypi.org","protocol":"https"}}}`)
	if got := r.PromptParams()["message"]; got != "Codex wants network access to **pypi.org**" {
		t.Errorf("network message = %v", got)
	}
	r = mustDecode(t, `{"id":1,"method":"mcpServer/elicitation/request","params":{"message":"Proceed?"}}`)
	p = r.PromptParams()
	if p["mode"] != "form" || asJSON(t, p["requestedSchema"]) != `{"properties":{},"type":"object"}` {
		t.Errorf("an MCP elicitation without mode or schema is a form with an empty schema: %v", p)
	}
}

func TestDecodeErrors(t *testing.T) {
	cases := []struct{ body, want string }{
		{``, "JSON-RPC request object"},
		{`[]`, "JSON-RPC request object"},
		{`"x"`, "JSON-RPC request object"},
		{`{"id":1,"method":"x"`, "JSON-RPC request object"},
		{`{"method":"execCommandApproval","params":{"command":["ls"]}}`, "id is required"},
		{`{"id":null,"method":"execCommandApproval","params":{"command":["ls"]}}`, "id is required"},
		{`{"id":1.5,"method":"execCommandApproval","params":{"command":["ls"]}}`, "integer or a string"},
		{`{"id":true,"method":"execCommandApproval","params":{"command":["ls"]}}`, "integer or a string"},
		{`{"id":{},"method":"execCommandApproval","params":{"command":["ls"]}}`, "integer or a string"},
		{`{"id":1,"params":{}}`, "method is required"},
		{`{"id":1,"method":5,"params":{}}`, "method is required"},
		{`{"id":1,"method":"turn/start","params":{}}`, "unsupported method"},
		{`{"id":1,"method":"item/fileChange/requestApproval"}`, "params is required"},
		{`{"id":1,"method":"item/fileChange/requestApproval","params":[]}`, "params is required"},
		{`{"id":1,"method":"item/commandExecution/requestApproval","params":{"command":5}}`, "params.command"},
		{`{"id":1,"method":"item/commandExecution/requestApproval","params":{"command":["ls",1]}}`, "params.command"},
		{`{"id":1,"method":"execCommandApproval","params":{}}`, "params.command"},
		{`{"id":1,"method":"item/permissions/requestApproval","params":{"permissions":[]}}`, "params.permissions"},
		{`{"id":1,"method":"item/tool/requestUserInput","params":{"questions":[]}}`, "params.questions"},
		{`{"id":1,"method":"item/tool/requestUserInput","params":{"questions":[{"question":"q"}]}}`, "params.questions[0].id"},
		{`{"id":1,"method":"item/tool/requestUserInput","params":{"questions":["q"]}}`, "params.questions[0]"},
		{`{"id":1,"method":"mcpServer/elicitation/request","params":{"mode":"form"}}`, "params.message"},
		{`{"id":1,"method":"mcpServer/elicitation/request","params":{"mode":"url","message":"m"}}`, "params.url"},
		{`{"id":1,"method":"mcpServer/elicitation/request","params":{"mode":"sms","message":"m"}}`, "params.mode"},
		{`{"id":1,"method":"mcpServer/elicitation/request","params":{"message":"m","requestedSchema":"x"}}`, "requestedSchema"},
	}
	for _, tc := range cases {
		_, err := Decode([]byte(tc.body))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Decode(%s) = %v, want an error containing %q", tc.body, err, tc.want)
		}
	}
	_, err := Decode([]byte(`{"id":1,"method":"turn/start","params":{}}`))
	if !errors.Is(err, ErrUnsupportedMethod) {
		t.Errorf("an unknown method must wrap ErrUnsupportedMethod: %v", err)
	}
}

func TestDecodeAcceptsJSONRPCFieldAndStringIDs(t *testing.T) {
	r := mustDecode(t, `{"jsonrpc":"2.0","id":"abc","method":"item/fileChange/requestApproval","params":{},"extra":1}`)
	if r.ID != "abc" {
		t.Errorf("id = %#v", r.ID)
	}
	r = mustDecode(t, `{"id":-3,"method":"item/fileChange/requestApproval","params":{}}`)
	if r.ID != int64(-3) {
		t.Errorf("id = %#v", r.ID)
	}
}

// TestCanonicalKey pins the exact bytes the deterministic id hashes: sorted keys, no
// spaces, no HTML escaping, and the id's JSON type kept.
func TestCanonicalKey(t *testing.T) {
	r := mustDecode(t, `{"id":7,"method":"item/commandExecution/requestApproval","params":{}}`)
	if got := string(r.CanonicalKey("conv_1")); got != `{"method":"item/commandExecution/requestApproval","request_id":7,"session_id":"conv_1"}` {
		t.Errorf("key = %s", got)
	}
	r = mustDecode(t, `{"id":"<7>","method":"item/commandExecution/requestApproval","params":{}}`)
	if got := string(r.CanonicalKey("conv_1")); got != `{"method":"item/commandExecution/requestApproval","request_id":"<7>","session_id":"conv_1"}` {
		t.Errorf("key = %s", got)
	}
}

func TestFingerprintSeparatesDifferentRequests(t *testing.T) {
	a := mustDecode(t, `{"id":7,"method":"execCommandApproval","params":{"command":["ls"],"cwd":"/a"}}`)
	b := mustDecode(t, `{"id":7, "method":"execCommandApproval","params":{"cwd":"/a","command":["ls"]}}`)
	c := mustDecode(t, `{"id":7,"method":"execCommandApproval","params":{"command":["rm","-rf","/"],"cwd":"/a"}}`)
	if a.Fingerprint() != b.Fingerprint() {
		t.Errorf("the same request (keys reordered) must have the same fingerprint")
	}
	if a.Fingerprint() == c.Fingerprint() {
		t.Errorf("different commands must have different fingerprints")
	}
}

func TestUserInputAnswersPrefersIDThenHeaderThenQuestion(t *testing.T) {
	qs := []any{map[string]any{"id": "q1", "header": "H", "question": "Q?"}}
	got := asJSON(t, UserInputAnswers(qs, map[string]any{"Q?": "from question", "H": "from header", "q1": "from id"}))
	if got != `{"q1":{"answers":["from id"]}}` {
		t.Errorf("id must win: %s", got)
	}
	got = asJSON(t, UserInputAnswers(qs, map[string]any{"Q?": "from question", "H": ""}))
	if got != `{"q1":{"answers":["from question"]}}` {
		t.Errorf("an empty header answer falls through to the question text: %s", got)
	}
	got = asJSON(t, UserInputAnswers(qs, map[string]any{"q1": true, "remember": true}))
	if got != `{"q1":{"answers":["true"]}}` {
		t.Errorf("booleans become their JSON text: %s", got)
	}
	got = asJSON(t, UserInputAnswers(qs, map[string]any{"q1": json.Number("3")}))
	if got != `{"q1":{"answers":["3"]}}` {
		t.Errorf("numbers become their JSON text: %s", got)
	}
}
