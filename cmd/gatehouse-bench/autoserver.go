package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"time"
)

// mcpVersion is the MCP revision the bench's client speaks (an initialize handshake,
// then Mcp-Session-Id on each call).
const mcpVersion = "2025-06-18"

// runAutoAnswered measures the auto-answered requests on a server of its own, on an
// empty database (url), whose MCP tools run on the reference server (runnerURL): every
// rule-answered hook leaves a decided prompt and its audit row, thousands of which
// would upset the other measurements.
func runAutoAnswered(t *table, db, bin, url, runnerURL string, ab *autoBaselines, n int, d time.Duration) {
	srv, pp, err := startGatehouse(bin, url, 0, "--runner-url", runnerURL)
	if err != nil {
		t.note(db, "auto-answered: server did not start: "+err.Error())
		return
	}
	defer srv.stop()
	hc := newHTTP(4)
	defer hc.CloseIdleConnections()
	sid, err := newSession(hc, srv.URL)
	if err != nil {
		t.note(db, "auto-answered: session: "+err.Error())
		return
	}
	session := srv.URL + "/v1/sessions/" + sid
	ruleID, err := allowRule(hc, srv.URL, sid)
	if err != nil {
		t.note(db, "auto-answered: "+err.Error())
		return
	}
	mcpSession, err := mcpInitialize(hc, session+"/mcp")
	if err != nil {
		t.note(db, "auto-answered: MCP initialize: "+err.Error())
		return
	}
	var hooks atomic.Int64 // hooks answered allow: each must be in the audit
	hook := postCheck(session+"/hooks/permission-request", hookBody(""), nil, `"behavior":"allow"`)
	commitBefore, _ := scrapeHistogram(hc, srv.MetricsURL, commitHistogram)
	kinds := []autoKind{
		{name: "policies/evaluate → ALLOW", floor: ab.FloorEvalCall, peer: ab.PeerEvalCall, peerHasIt: true,
			lim50: overFloor(100 * time.Microsecond), lim99: overFloor(time.Millisecond),
			gatehouse: postCheck(session+"/policies/evaluate", evaluateBody(), nil, "POLICY_ACTION_ALLOW")},
		{name: "MCP tools/call passed to the runner", floor: ab.FloorRunnerCall,
			lim50: overFloor(100 * time.Microsecond), lim99: overFloor(time.Millisecond),
			gatehouse: postCheck(session+"/mcp", map[string]any{"jsonrpc": "2.0", "id": 2, "method": "tools/call",
				"params": map[string]any{"name": benchTool, "arguments": map[string]any{"text": "hi"}}},
				map[string]string{"Mcp-Session-Id": mcpSession, "MCP-Protocol-Version": mcpVersion, "Accept": "application/json, text/event-stream"},
				`"ran `+benchTool+`"`),
			why: func(g autoFigures) string { return passNote(ab, g) }},
		{name: "hook answered by an allow rule", floor: ab.FloorHookCall, peer: ab.PeerEvalCall, peerHasIt: true,
			lim50: timesFloor(2), lim99: timesFloor(3),
			settle: func() error { // reading the rule waits for the answers given before to be stored
				code, b, err := getJSON(hc, srv.URL+"/v1/rules/"+ruleID)
				if err == nil && code != http.StatusOK {
					err = fmt.Errorf("rule: %d %.200s", code, b)
				}
				return err
			},
			gatehouse: func(hc *http.Client) error {
				err := hook(hc)
				if err == nil {
					hooks.Add(1)
				}
				return err
			},
			why: func(autoFigures) string {
				after, err := scrapeHistogram(hc, srv.MetricsURL, commitHistogram)
				c50, ok50 := after.quantileSince(commitBefore, 0.50)
				c99, ok99 := after.quantileSince(commitBefore, 0.99)
				if err != nil || !ok50 || !ok99 {
					return ""
				}
				return fmt.Sprintf("the write of its decision to the journal alone (a write neither the floor nor the peer makes) took p50 %s, p99 %s (%s)",
					fmtDur(c50), fmtDur(c99), commitHistogram)
			}},
	}
	for _, k := range kinds {
		r, err := measureAuto(t, db, k, n, d)
		if err != nil {
			t.note(db, k.name+": "+err.Error())
			continue
		}
		if r.missLat || r.missThr {
			t.note(db, "why "+k.name+" missed: "+whyAuto(pp, k, r))
		}
	}
	answered := hooks.Load()
	fired, audited, err := ruleRecord(hc, srv.URL, sid, ruleID)
	if err != nil {
		t.note(db, "hook answered by an allow rule: its record: "+err.Error())
		return
	}
	t.row(db, "hook answered by an allow rule: decisions recorded", fmt.Sprintf("%d of %d answered in the audit, rule fired %d", audited, answered, fired),
		"—", "—", verdict("every answer", audited == answered && fired == answered))
}

// allowRule creates an allow rule for the bench's hook (Bash "true") on session sid
// and returns its id.
func allowRule(hc *http.Client, base, sid string) (string, error) {
	code, b, err := postJSON(bgctx(), hc, base+"/v1/rules", map[string]any{"effect": "allow", "tool": "Bash",
		"match": map[string]any{"kind": "exact", "pattern": "true"}, "scope": map[string]any{"kind": "session", "value": sid}})
	if err != nil {
		return "", err
	}
	if code != http.StatusCreated {
		return "", fmt.Errorf("create rule: %d %s", code, b)
	}
	return idOf(b)
}

// mcpInitialize opens an MCP session and returns its Mcp-Session-Id.
func mcpInitialize(hc *http.Client, url string) (string, error) {
	raw, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": map[string]any{
		"protocolVersion": mcpVersion, "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "gatehouse-bench", "version": "1"}}})
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(raw))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := hc.Do(req)
	if err != nil {
		return "", err
	}
	resp.Body.Close()
	tok := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || tok == "" {
		return "", fmt.Errorf("answered %d without an Mcp-Session-Id", resp.StatusCode)
	}
	return tok, nil
}

// ruleRecord reads how often the rule fired and how many of the session's decisions
// the audit export attributes to it.
func ruleRecord(hc *http.Client, base, sid, ruleID string) (fired, audited int64, err error) {
	code, b, err := getJSON(hc, base+"/v1/rules/"+ruleID)
	if err != nil {
		return 0, 0, err
	}
	var r struct {
		FireCount int64 `json:"fire_count"`
	}
	if code != http.StatusOK || json.Unmarshal(b, &r) != nil {
		return 0, 0, fmt.Errorf("rule: %d %.200s", code, b)
	}
	resp, err := hc.Get(base + "/v1/audit?format=jsonl&session=" + sid)
	if err != nil {
		return 0, 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, 0, fmt.Errorf("audit export: %d", resp.StatusCode)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	want := `"rule_id":"` + ruleID + `"`
	for sc.Scan() {
		if strings.Contains(sc.Text(), want) && strings.Contains(sc.Text(), `"resolved_via":"rule"`) {
			audited++
		}
	}
	return r.FireCount, audited, sc.Err()
}
