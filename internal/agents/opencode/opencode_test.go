package opencode

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/models"
)

// Bodies as OpenCode 1.18.33's server sends them in permission.asked (captured from
// `opencode serve` by the real-client test), with what the bridge adds.
const (
	bashBody     = `{"id":"per_23f79f87d001QEWKG0jedVKe05","sessionID":"ses_dc0860878ffe4tDpb3dBtTBr5O","permission":"bash","patterns":["touch /w/proj/marker"],"metadata":{"command":"touch /w/proj/marker"},"always":["touch *"],"tool":{"messageID":"msg_23f79f827001I5f0KHdAqiQWNI","callID":"call_1"},"directory":"/w/proj","_gatehouse_elicitation_id":"elicit_opencode_0123456789abcdef0123456789abcdef"}`
	externalBody = `{"id":"per_23f7931ad001NuZ8v8yGr9XuMH","sessionID":"ses_dc086dd98ffe3z0qzFbZ1GEOxA","permission":"external_directory","patterns":["/tmp/oc/*"],"metadata":{"command":"touch /tmp/oc/marker","directories":["/tmp/oc"],"patterns":["/tmp/oc/*"]},"always":["/tmp/oc/*"],"tool":{"messageID":"msg_23f792ad2001DOUEtCEHSKVhDh","callID":"call_1"}}`
	editBody     = `{"id":"per_1","sessionID":"ses_1","permission":"edit","patterns":["src/a.go"],"metadata":{"filepath":"/w/proj/src/a.go","diff":"--- a\n+++ b\n"},"always":["*"]}`
	readBody     = `{"id":"per_2","sessionID":"ses_1","permission":"read","patterns":["/etc/hosts"],"metadata":{},"always":["*"]}`
	fetchBody    = `{"id":"per_3","sessionID":"ses_1","permission":"webfetch","patterns":["https://example.com/x"],"metadata":{"url":"https://example.com/x","format":"markdown"},"always":["*"]}`
	globBody     = `{"id":"per_4","sessionID":"ses_1","permission":"glob","patterns":["**/*.go"],"metadata":{},"always":[],"future":{"x":1}}`
	childBody    = `{"id":"per_5","sessionID":"ses_child","rootSessionID":"ses_root","permission":"bash","patterns":["ls"],"metadata":{"command":"ls"},"always":["ls *"]}`
	repliedBody  = `{"sessionID":"ses_dc0860878ffe4tDpb3dBtTBr5O","requestID":"per_23f79f87d001QEWKG0jedVKe05","reply":"once"}`
)

func decode(t *testing.T, body string) *models.HookRequest {
	t.Helper()
	r, err := Agent{}.Decode("", []byte(body))
	if err != nil {
		t.Fatalf("Decode: %v", err)
	}
	return r
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestDecodeTools: each permission maps onto the tool name and kind rules know, with
// only its target in the input; the session is OpenCode's, namespaced.
func TestDecodeTools(t *testing.T) {
	cases := []struct {
		name, body, tool string
		kind             models.ToolKind
		input, message   string
	}{
		{"bash", bashBody, "Bash", models.KindShell, `{"command":"touch /w/proj/marker"}`, "OpenCode wants to run **touch /w/proj/marker**"},
		{"edit", editBody, "Edit", models.KindEdit, `{"file_path":"/w/proj/src/a.go"}`, "OpenCode wants to edit **/w/proj/src/a.go**"},
		{"read from pattern", readBody, "Read", models.KindRead, `{"file_path":"/etc/hosts"}`, "OpenCode wants to read **/etc/hosts**"},
		{"webfetch", fetchBody, "WebFetch", models.KindFetch, `{"url":"https://example.com/x"}`, "OpenCode wants to fetch **https://example.com/x**"},
		{"external directory", externalBody, "external_directory", models.KindOther, `{"directories":["/tmp/oc"],"patterns":["/tmp/oc/*"]}`, "OpenCode wants to reach outside the project: `/tmp/oc/*`"},
		{"other", globBody, "glob", models.KindOther, `{"patterns":["**/*.go"]}`, "OpenCode wants to use **glob** on `**/*.go`"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := decode(t, tc.body)
			if r.Tool.Name != tc.tool || r.Tool.Kind != tc.kind || jsonOf(t, r.Tool.Input) != tc.input {
				t.Fatalf("tool = %s %s %s", r.Tool.Name, r.Tool.Kind, jsonOf(t, r.Tool.Input))
			}
			if r.Params["message"] != tc.message || r.Params["vendor"] != "OpenCode" || r.Origin != Origin {
				t.Fatalf("params = %v", r.Params)
			}
			if !strings.HasPrefix(r.ExternalKey, "opencode:ses_") || r.SubAgent != "" {
				t.Fatalf("session = %q %q", r.ExternalKey, r.SubAgent)
			}
		})
	}
	r := decode(t, bashBody)
	if r.ExternalSession != "ses_dc0860878ffe4tDpb3dBtTBr5O" || r.Cwd != "/w/proj" || r.ReattachID != "elicit_opencode_0123456789abcdef0123456789abcdef" {
		t.Fatalf("request = %+v", r)
	}
	for k, v := range map[string]any{"command": "touch /w/proj/marker", "opencode_request_id": "per_23f79f87d001QEWKG0jedVKe05",
		"opencode_permission": "bash", "allow_remember": true, "content_preview": "touch /w/proj/marker"} {
		if r.Params[k] != v {
			t.Errorf("%s = %#v, want %#v", k, r.Params[k], v)
		}
	}
	if s := jsonOf(t, r.Params[models.ParamRememberSuggestion]); !strings.Contains(s, `"Always allow touch *"`) {
		t.Errorf("remember suggestion = %s", s)
	}
	if e := decode(t, externalBody); e.Params["command"] != "touch /tmp/oc/marker" || !strings.Contains(e.Params["content_preview"].(string), "touch /tmp/oc/marker") {
		t.Errorf("external_directory does not show the command: %v", e.Params)
	}
	if g := decode(t, globBody); g.Params["allow_remember"] != false {
		t.Errorf("nothing to remember, yet allow_remember = %v", g.Params["allow_remember"])
	}
	if e := decode(t, editBody); e.Params["diff"] != "--- a\n+++ b\n" {
		t.Errorf("edit diff = %v", e.Params["diff"])
	}
}

// TestSubAgent: a child session's ask parks under its top-level session.
func TestSubAgent(t *testing.T) {
	r := decode(t, childBody)
	if r.ExternalSession != "ses_root" || r.ExternalKey != "opencode:ses_root" || r.SubAgent != "ses_child" || r.SubAgentType != SubAgentType {
		t.Fatalf("request = %+v", r)
	}
}

// TestAnswers pins the reply bodies: once, always only when remembered and OpenCode
// offered patterns, reject with the reason.
func TestAnswers(t *testing.T) {
	cases := []struct {
		name, body, action string
		content            map[string]any
		want               string
	}{
		{"once", bashBody, "accept", nil, `{"reply":"once"}`},
		{"always", bashBody, "accept", map[string]any{"remember": true}, `{"reply":"always"}`},
		{"always chosen", bashBody, "accept", map[string]any{"remember": map[string]any{"suggestion": 0}}, `{"reply":"always"}`},
		{"remember false", bashBody, "accept", map[string]any{"remember": false}, `{"reply":"once"}`},
		{"remember garbage", bashBody, "accept", map[string]any{"remember": "yes"}, `{"reply":"once"}`},
		{"nothing to remember", globBody, "accept", map[string]any{"remember": true}, `{"reply":"once"}`},
		{"reject", bashBody, "decline", nil, `{"message":"Denied by bob@example.com in Gatehouse.","reply":"reject"}`},
		{"reject reason", bashBody, "decline", map[string]any{"feedback": "  use the staging dir  "}, `{"message":"use the staging dir","reply":"reject"}`},
		{"cancel", bashBody, "cancel", nil, `{"message":"Denied by bob@example.com in Gatehouse.","reply":"reject"}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := decode(t, tc.body)
			if got := jsonOf(t, r.Answer(models.Verdict{Action: tc.action, Content: tc.content}, "bob@example.com")); got != tc.want {
				t.Fatalf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
	raw, ok := Agent{}.Deny([]byte(bashBody), "no")
	if !ok || string(raw) != `{"message":"no","reply":"reject"}` {
		t.Fatalf("Deny = %s %v", raw, ok)
	}
	if _, ok := (Agent{}).Deny([]byte(`{"x":1}`), "no"); ok {
		t.Fatal("Deny answered a body that is no request")
	}
}

// TestReplied: a permission.replied event (bare or enveloped) withdraws exactly its
// request's prompt.
func TestReplied(t *testing.T) {
	for _, body := range []string{repliedBody, `{"type":"permission.replied","properties":` + repliedBody + `}`} {
		r := decode(t, body)
		if r.Retire == nil || r.Event != EventReplied || r.ExternalKey != "opencode:ses_dc0860878ffe4tDpb3dBtTBr5O" {
			t.Fatalf("request = %+v", r)
		}
		if !r.Retire(decode(t, bashBody).Params) || r.Retire(decode(t, externalBody).Params) {
			t.Fatal("Retire matches the wrong prompts")
		}
	}
	enveloped := decode(t, `{"type":"permission.asked","properties":`+bashBody+`}`)
	if enveloped.Retire != nil || enveloped.Tool.Name != "Bash" {
		t.Fatalf("enveloped ask = %+v", enveloped)
	}
}

// TestDecodeBadInput: every refusal names the field; unknown fields are ignored.
func TestDecodeBadInput(t *testing.T) {
	cases := []struct{ name, body, want string }{
		{"not json", `nope`, "JSON object"},
		{"array", `[1]`, "JSON object"},
		{"empty", `{}`, "is required"},
		{"no id", `{"sessionID":"s","permission":"bash","patterns":[],"metadata":{"command":"ls"}}`, "id is required"},
		{"no session", `{"id":"p","permission":"bash","patterns":[],"metadata":{"command":"ls"}}`, "sessionID is required"},
		{"no permission", `{"id":"p","sessionID":"s","patterns":[],"metadata":{}}`, "permission is required"},
		{"id number", `{"id":3,"sessionID":"s","permission":"bash"}`, "id has the wrong type"},
		{"patterns string", `{"id":"p","sessionID":"s","permission":"bash","patterns":"ls","metadata":{"command":"ls"}}`, "patterns has the wrong type"},
		{"no patterns", `{"id":"p","sessionID":"s","permission":"bash","metadata":{"command":"ls"}}`, "patterns must be a list"},
		{"metadata null", `{"id":"p","sessionID":"s","permission":"bash","patterns":[],"metadata":null}`, "metadata must be an object"},
		{"metadata list", `{"id":"p","sessionID":"s","permission":"bash","patterns":[],"metadata":[]}`, "metadata must be an object"},
		{"no command", `{"id":"p","sessionID":"s","permission":"bash","patterns":["ls"],"metadata":{}}`, "metadata.command"},
		{"blank command", `{"id":"p","sessionID":"s","permission":"bash","patterns":["ls"],"metadata":{"command":" "}}`, "metadata.command"},
		{"command list", `{"id":"p","sessionID":"s","permission":"bash","patterns":["ls"],"metadata":{"command":["ls"]}}`, "metadata.command"},
		{"edit without path", `{"id":"p","sessionID":"s","permission":"edit","patterns":[],"metadata":{}}`, "metadata.filepath"},
		{"fetch without url", `{"id":"p","sessionID":"s","permission":"webfetch","patterns":[],"metadata":{}}`, "metadata.url"},
		{"other event", `{"type":"session.updated","properties":{}}`, `type: Gatehouse does not handle "session.updated"`},
		{"properties not object", `{"type":"permission.asked","properties":[1]}`, "properties must be an object"},
		{"replied without request", `{"type":"permission.replied","properties":{"sessionID":"s"}}`, "requestID is required"},
		{"replied without session", `{"requestID":"per_1","reply":"once"}`, "sessionID is required"},
	}
	for _, tc := range cases {
		if _, err := (Agent{}).Decode("", []byte(tc.body)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error mentioning %q", tc.name, err, tc.want)
		}
	}
}
