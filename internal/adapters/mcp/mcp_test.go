package mcp_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/adapters/mcp"
)

// mrtrParams runs the MRTR shaping through the full JSON-RPC response, as the seed's
// _mcp_input_required_response did, and returns the input request's params.
func mrtrParams(t *testing.T, a mcp.Approval, state string) (map[string]any, map[string]any) {
	t.Helper()
	raw, err := json.Marshal(mcp.Result(json.RawMessage("1"), mcp.InputRequiredResult(a, state)))
	if err != nil {
		t.Fatal(err)
	}
	var body map[string]any
	if err := json.Unmarshal(raw, &body); err != nil {
		t.Fatal(err)
	}
	result := body["result"].(map[string]any)
	req := result["inputRequests"].(map[string]any)[a.ElicitationID].(map[string]any)
	if req["method"] != "elicitation/create" {
		t.Fatalf("method = %v", req["method"])
	}
	return req["params"].(map[string]any), body
}

// TestSeedMRTRResponseURLMode: url mode with a session → mode url and the absolute
// approval URL (whose path is /approve/{sid}/{eid}); exactly {mode, message, url}, the
// 2026-07-28 shape real clients insist on.
func TestSeedMRTRResponseURLMode(t *testing.T) {
	a := mcp.Approval{ElicitationID: "elicit_abc", Message: "Approve?",
		URL: "https://gatehouse.example" + mcp.ApprovePath("conv_123", "elicit_abc")}
	params, body := mrtrParams(t, a, `{"elicitation_id":"elicit_abc","session_id":"conv_123"}`)
	if params["mode"] != "url" || params["url"] != "https://gatehouse.example/approve/conv_123/elicit_abc" || params["message"] != "Approve?" {
		t.Fatalf("params = %v", params)
	}
	want := `{"id":1,"jsonrpc":"2.0","result":{"inputRequests":{"elicit_abc":{"method":"elicitation/create","params":{"message":"Approve?","mode":"url","url":"https://gatehouse.example/approve/conv_123/elicit_abc"}}},"requestState":"{\"elicitation_id\":\"elicit_abc\",\"session_id\":\"conv_123\"}","resultType":"input_required"}}`
	got, _ := json.Marshal(body)
	if string(got) != want {
		t.Fatalf("response\n got %s\nwant %s", got, want)
	}
}

// TestSeedMRTRResponseFormMode: form mode (or no session: no approval page to link to)
// → mode form, the approval schema, and no url key.
func TestSeedMRTRResponseFormMode(t *testing.T) {
	params, _ := mrtrParams(t, mcp.Approval{ElicitationID: "elicit_abc", Message: "Approve?"}, "{}")
	if _, has := params["url"]; has || params["mode"] != "form" {
		t.Fatalf("params = %v", params)
	}
	if params["requestedSchema"] == nil {
		t.Fatalf("form-mode params lack the approval schema: %v", params)
	}
}

// TestSeedMRTRResponseNoSessionIDStaysForm: url mode but no session → no approval page
// to link to, so the approval carries no URL, and one without a URL is a form.
func TestSeedMRTRResponseNoSessionIDStaysForm(t *testing.T) {
	params, _ := mrtrParams(t, mcp.Approval{ElicitationID: "elicit_abc", Message: "Approve?", URL: ""}, "{}")
	if _, has := params["url"]; has || params["mode"] != "form" {
		t.Fatalf("params = %v", params)
	}
}

// TestURLRequiredError: -32042 carries the URL elicitation, with its id, in data.
func TestURLRequiredError(t *testing.T) {
	e := mcp.URLRequiredError(mcp.Approval{ElicitationID: "elicit_abc", Message: "Approve?", URL: "https://g.example/approve/s/elicit_abc"})
	raw, _ := json.Marshal(e)
	want := `{"code":-32042,"message":"A person must approve this call in Gatehouse first: open https://g.example/approve/s/elicit_abc, then retry the call","data":{"elicitations":[{"elicitationId":"elicit_abc","message":"Approve?","mode":"url","url":"https://g.example/approve/s/elicit_abc"}]}}`
	if string(raw) != want {
		t.Fatalf("got  %s\nwant %s", raw, want)
	}
}

// TestClientCapabilities: initialize's elicitation {} means form only; per-request
// _meta capabilities override; Claude Code's tool-use id and a progress token are read.
func TestClientCapabilities(t *testing.T) {
	cases := []struct {
		params    string
		version   string
		form, url bool
		declared  bool
	}{
		{`{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}}}`, "2025-11-25", true, false, true},
		{`{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{"form":{},"url":{}}}}`, "2025-11-25", true, true, true},
		{`{"protocolVersion":"2025-06-18","capabilities":{"elicitation":{"url":{}}}}`, "2025-06-18", false, true, true},
		{`{"protocolVersion":"2025-03-26","capabilities":{}}`, "2025-03-26", false, false, false},
		{`{"protocolVersion":"1999-01-01"}`, mcp.ProtocolLegacyDefault, false, false, false},
	}
	for _, tc := range cases {
		c := mcp.ClientFromInitialize(json.RawMessage(tc.params))
		if c.Version != tc.version || (c.Elicitation != nil) != tc.declared ||
			(c.Elicitation != nil && (c.Elicitation.Form != tc.form || c.Elicitation.URL != tc.url)) {
			t.Errorf("%s → %+v %+v", tc.params, c, c.Elicitation)
		}
		if c.MultiRoundTrip() {
			t.Errorf("%s: an initialize client must never be sent input_required", tc.params)
		}
	}
	m := mcp.ParseRequestMeta(json.RawMessage(`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}}},"progressToken":7,"claudecode/toolUseId":"toolu_1"}}`))
	if m.Version != "2026-07-28" || m.Elicitation == nil || !m.Elicitation.Form || m.Elicitation.URL || string(m.ProgressToken) != "7" || m.ToolUseID != "toolu_1" {
		t.Fatalf("meta = %+v", m)
	}
	if m := mcp.ParseRequestMeta(json.RawMessage(`{"_meta":{"io.modelcontextprotocol/clientCapabilities":{}}}`)); m.Elicitation == nil || m.Elicitation.Form || m.Elicitation.URL {
		t.Fatalf("capabilities without elicitation must read as none declared: %+v", m.Elicitation)
	}
	if (mcp.Client{}).MultiRoundTrip() != true || (mcp.Client{Version: "2026-07-28"}).Latest() != true {
		t.Fatal("bare and 2026-07-28 clients take input_required")
	}
}

// TestClientToken: an Mcp-Session-Id round-trips the client and is bound to its
// session; a forged or foreign one does not verify.
func TestClientToken(t *testing.T) {
	s := mcp.NewStateSigner(strings.Repeat("k", 32))
	c := mcp.Client{Version: "2025-11-25", Elicitation: &mcp.Elicitation{Form: true}}
	tok := s.SignClient("conv_a", c, "n1")
	got, err := s.VerifyClient(tok, "conv_a")
	if err != nil || got.Version != c.Version || got.Elicitation == nil || !got.Elicitation.Form || got.Elicitation.URL {
		t.Fatalf("verify = %+v, %v", got, err)
	}
	if _, err := s.VerifyClient(tok, "conv_b"); err == nil {
		t.Fatal("a token verified for another session")
	}
	if _, err := mcp.NewStateSigner(strings.Repeat("x", 32)).VerifyClient(tok, "conv_a"); err == nil {
		t.Fatal("a token verified under another key")
	}
	state := s.Sign(mcp.State{SessionID: "conv_a", Expires: 1 << 40})
	if _, err := s.VerifyClient(state, "conv_a"); err == nil {
		t.Fatal("a requestState passed as a client token")
	}
}

func TestParse(t *testing.T) {
	cases := []struct {
		name string
		body string
		code int
		kind mcp.Kind
		id   string
	}{
		{"not json", `{"jsonrpc":`, mcp.CodeParseError, 0, ""},
		{"batch", `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, mcp.CodeInvalidRequest, 0, ""},
		{"scalar", `42`, mcp.CodeInvalidRequest, 0, ""},
		{"empty", ``, mcp.CodeInvalidRequest, 0, ""},
		{"wrong version", `{"jsonrpc":"1.0","id":3,"method":"ping"}`, mcp.CodeInvalidRequest, 0, "3"},
		{"missing method", `{"jsonrpc":"2.0","id":"a"}`, mcp.CodeInvalidRequest, 0, `"a"`},
		{"method not a string", `{"jsonrpc":"2.0","id":1,"method":7}`, mcp.CodeInvalidRequest, 0, ""},
		{"object id", `{"jsonrpc":"2.0","id":{},"method":"ping"}`, mcp.CodeInvalidRequest, 0, ""},
		{"array params", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":[1]}`, mcp.CodeInvalidParams, 0, "1"},
		{"request", `{"jsonrpc":"2.0","id":7,"method":"tools/list"}`, 0, mcp.KindRequest, "7"},
		{"notification", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, 0, mcp.KindNotification, ""},
		{"client response", `{"jsonrpc":"2.0","id":9,"result":{}}`, 0, mcp.KindResponse, "9"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			msg, err := mcp.Parse([]byte(tc.body))
			if tc.code != 0 {
				if err == nil || err.Code != tc.code {
					t.Fatalf("error = %v, want code %d", err, tc.code)
				}
			} else if err != nil || msg.Kind != tc.kind {
				t.Fatalf("msg = %+v, err = %v", msg, err)
			}
			if string(msg.ID) != tc.id {
				t.Fatalf("id = %s, want %s", msg.ID, tc.id)
			}
		})
	}
	raw, _ := json.Marshal(mcp.Fail(nil, mcp.Errorf(mcp.CodeParseError, "bad")))
	if string(raw) != `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"bad"}}` {
		t.Fatalf("error response = %s", raw)
	}
}

func TestParseToolCall(t *testing.T) {
	call, err := mcp.ParseToolCall(json.RawMessage(`{"name":"echo"}`))
	if err != nil || string(call.Arguments) != "{}" || call.RequestState != "" {
		t.Fatalf("%+v %v", call, err)
	}
	call, err = mcp.ParseToolCall(json.RawMessage(`{"name":"echo","arguments":{"a":1},"requestState":"s","inputResponses":{"k":{"action":"accept"}}}`))
	if err != nil || call.RequestState != "s" || call.ClientAction("k") != "accept" || call.ClientAction("x") != "" {
		t.Fatalf("%+v %v", call, err)
	}
	for _, bad := range []string{`{}`, `{"name":""}`, `{"name":3}`, `{"name":"x","arguments":[1]}`, `{"name":"x","requestState":5}`} {
		if _, err := mcp.ParseToolCall(json.RawMessage(bad)); err == nil || err.Code != mcp.CodeInvalidParams {
			t.Errorf("%s: err = %v", bad, err)
		}
	}
}

func TestRunnerToolAnswers(t *testing.T) {
	ans := mcp.ParseRunnerToolAnswer([]byte(`{"result":{"input_required":{"requestState":"mrtr_state_1","inputRequests":{"mcp_eid_1":{"params":{"mode":"form","message":"MCP server asks: overwrite file?","requestedSchema":{"type":"object","properties":{"confirm":{"type":"boolean"}}}}}}}}}`))
	if ans.InputRequired == nil || ans.InputRequired.RequestState != "mrtr_state_1" || ans.InputRequired.Requests["mcp_eid_1"]["message"] != "MCP server asks: overwrite file?" {
		t.Fatalf("input_required: %+v", ans)
	}
	ans = mcp.ParseRunnerToolAnswer([]byte(`{"result":{"resultType":"input_required","requestState":"s","inputRequests":{"k":{"method":"elicitation/create","params":{"message":"m"}}}}}`))
	if ans.InputRequired == nil || ans.InputRequired.Keys()[0] != "k" {
		t.Fatalf("native input_required: %+v", ans)
	}
	cases := map[string]string{
		`{"result":{"output":"tool ran"}}`:                                    `{"content":[{"text":"tool ran","type":"text"}]}`,
		`{"result":{"output":{"n":1}}}`:                                       `{"content":[{"text":"{\"n\":1}","type":"text"}]}`,
		`{"result":{"content":[{"type":"text","text":"hi"}],"isError":true}}`: `{"content":[{"text":"hi","type":"text"}],"isError":true}`,
		`{"output":"bare"}`:                                                   `{"content":[{"text":"bare","type":"text"}]}`,
		`{"result":{"content":[{"type":"text","text":"x"}],"structuredContent":{"n":2},"_meta":{}}}`: `{"content":[{"type":"text","text":"x"}],"structuredContent":{"n":2}}`,
	}
	for in, want := range cases {
		ans := mcp.ParseRunnerToolAnswer([]byte(in))
		got, _ := json.Marshal(ans.Result)
		if ans.Err != nil || !sameJSON(got, []byte(want)) {
			t.Errorf("%s: got %s %v, want %s", in, got, ans.Err, want)
		}
	}
	for _, bad := range []string{`nope`, `{"error":{"code":1,"message":"tool crashed"}}`, `{"result":{"other":1}}`, `{"result":{"input_required":{}}}`, `{"result":[]}`, `{"result":{"content":{"type":"text"}}}`, `{"result":{"content":5}}`} {
		if ans := mcp.ParseRunnerToolAnswer([]byte(bad)); ans.Err == nil || ans.Err.Code != mcp.CodeApplication {
			t.Errorf("%s: %+v", bad, ans)
		}
	}
	if ans := mcp.ParseRunnerToolAnswer([]byte(`{"error":{"message":"tool crashed"}}`)); ans.Err.Message != "tool crashed" {
		t.Errorf("runner error message lost: %+v", ans.Err)
	}
}

// sameJSON reports whether a and b hold the same JSON value (key order aside).
func sameJSON(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

func TestStateSigner(t *testing.T) {
	s := mcp.NewStateSigner(strings.Repeat("k", 32))
	now := time.Unix(1_800_000_000, 0)
	st := mcp.State{SessionID: "conv_a", ElicitationID: "elicit_x", Tool: "Bash", ArgsHash: mcp.ArgumentsHash(json.RawMessage(`{"b":2,"a":1}`)), Expires: now.Unix() + 60}
	tok := s.Sign(st)
	got, err := s.Verify(tok, now)
	if err != nil || got != st {
		t.Fatalf("verify: %+v %v", got, err)
	}
	if _, err := s.Verify(tok, now.Add(2*time.Minute)); !errors.Is(err, mcp.ErrStateExpired) {
		t.Fatalf("expired: %v", err)
	}
	if _, err := mcp.NewStateSigner(strings.Repeat("o", 32)).Verify(tok, now); !errors.Is(err, mcp.ErrStateForged) {
		t.Fatalf("other key: %v", err)
	}
	// Re-encode the payload for another session, keeping the old MAC.
	forged := mcp.NewStateSigner("attacker-key-attacker-key-attack").Sign(mcp.State{SessionID: "conv_b", ElicitationID: "elicit_x", Tool: "Bash", Expires: now.Unix() + 60})
	dot := strings.LastIndexByte(tok, '.')
	fdot := strings.LastIndexByte(forged, '.')
	if _, err := s.Verify(forged[:fdot]+tok[dot:], now); !errors.Is(err, mcp.ErrStateForged) {
		t.Fatalf("swapped payload: %v", err)
	}
	for _, bad := range []string{"", "mrtr_state_1", "gh1.", "gh1.x.y", `{"elicitation_id":"elicit_x"}`} {
		if _, err := s.Verify(bad, now); err == nil {
			t.Errorf("%q verified", bad)
		}
	}
	if mcp.ArgumentsHash(json.RawMessage(`{"a": 1, "b":2}`)) != st.ArgsHash {
		t.Fatal("hash depends on key order or whitespace")
	}
	if mcp.ArgumentsHash(json.RawMessage(`{"a":1,"b":3}`)) == st.ArgsHash {
		t.Fatal("hash ignores values")
	}
}

func TestInitializeAndDiscover(t *testing.T) {
	info := mcp.ServerInfo("")
	r := mcp.InitializeResult(json.RawMessage(`{"protocolVersion":"2025-06-18"}`), info)
	if r["protocolVersion"] != "2025-06-18" || r["capabilities"].(map[string]any)["tools"] == nil {
		t.Fatalf("initialize: %v", r)
	}
	if r := mcp.InitializeResult(json.RawMessage(`{"protocolVersion":"1999-01-01"}`), info); r["protocolVersion"] != mcp.ProtocolLegacyDefault {
		t.Fatalf("unknown version: %v", r["protocolVersion"])
	}
	d := mcp.DiscoverResult(info, true)
	if d["supportedVersions"].([]string)[0] != "2026-07-28" {
		t.Fatalf("discover: %v", d)
	}
}

func TestInputPromptParams(t *testing.T) {
	p := mcp.InputPromptParams("k", "mcp__test__echo", map[string]any{"message": "overwrite?", "requestedSchema": map[string]any{"type": "object"}})
	if p["mode"] != "form" || p["message"] != "overwrite?" || p["requestedSchema"] == nil || p["phase"] != "mcp_input" || p["tool_name"] != "mcp__test__echo" {
		t.Fatalf("form: %v", p)
	}
	p = mcp.InputPromptParams("k", "t", map[string]any{"mode": "url", "message": "sign in", "url": "https://idp.example/x"})
	if p["mode"] != "url" || p["url"] != "https://idp.example/x" || p["requestedSchema"] != nil {
		t.Fatalf("url: %v", p)
	}
	p = mcp.InputPromptParams("k", "t", map[string]any{"mode": "url"})
	if p["mode"] != "form" || p["message"] == "" {
		t.Fatalf("url without url falls back to form: %v", p)
	}
}

// FuzzUntrustedInput: the decoders of client- and runner-supplied bytes never panic,
// and a state that verifies is one the signer produced.
func FuzzUntrustedInput(f *testing.F) {
	signer := mcp.NewStateSigner(strings.Repeat("k", 32))
	good := signer.Sign(mcp.State{SessionID: "conv_a", ElicitationID: "elicit_x", Tool: "t", Expires: 1 << 40})
	for _, seed := range []string{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"a":[1,{"b":null}]}}}`,
		`[]`, `{"jsonrpc":"2.0","id":null}`, `{"result":{"input_required":{"inputRequests":{"k":{"params":null}}}}}`, good, "gh1.e30.AAAA"} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if msg, err := mcp.Parse(b); err == nil && msg.Kind == mcp.KindRequest {
			if call, err := mcp.ParseToolCall(msg.Params); err == nil {
				_ = mcp.ArgumentsHash(call.Arguments)
				_ = call.ArgumentsMap()
			}
			_ = mcp.ParseRequestMeta(msg.Params)
			_ = mcp.ClientFromInitialize(msg.Params)
			_ = mcp.InitializeResult(msg.Params, mcp.ServerInfo(""))
		}
		_ = mcp.ParseRunnerToolAnswer(b)
		_, _ = mcp.ParseRunnerToolsList(b)
		if st, err := signer.Verify(string(b), time.Unix(0, 0)); err == nil && string(b) != good {
			t.Fatalf("a state the signer did not produce verified: %q → %+v", b, st)
		}
	})
}

// TestDuplicateKey finds a repeated key at any depth, and only a real repetition.
func TestDuplicateKey(t *testing.T) {
	cases := []struct {
		in, path string
	}{
		{`{"a":1,"b":2}`, ""},
		{`{"a":1,"a":2}`, "$.a"},
		{`{"cmd":"ls","x":{"y":[1,{"z":1,"z":2}]}}`, "$.x.y[1].z"},
		{`{"a":{"k":1},"b":{"k":1}}`, ""},
		{`{"a":[{"k":1},{"k":2}]}`, ""},
		{`{"a":[[],[{"q":1,"r":{},"q":3}]]}`, "$.a[1][0].q"},
		{`{"a":"{\"b\":1,\"b\":2}"}`, ""},
		{`{"a":`, ""},
	}
	for _, tc := range cases {
		path, found := mcp.DuplicateKey([]byte(tc.in))
		if path != tc.path || found != (tc.path != "") {
			t.Errorf("%s → %q %v, want %q", tc.in, path, found, tc.path)
		}
	}
	if _, err := mcp.ParseToolCall(json.RawMessage(`{"name":"deploy","arguments":{"env":"staging","env":"prod"}}`)); err == nil || err.Code != mcp.CodeInvalidParams || !strings.Contains(err.Message, "$.env") {
		t.Fatalf("duplicate argument keys: %v", err)
	}
}
