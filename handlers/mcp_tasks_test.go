package handlers_test

import (
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
)

const taskBase = "https://gatehouse.example"

// TestMCPTasksAskThroughTheTask: a client that declares the Tasks extension and URL
// elicitation gets a task for a call that needs approval: input_required carrying the
// approval link, the same task for the same call made again, working once the client
// answered, and — after a person accepts — completed with the tool's result, the tool
// run once however often the task is read. A "no" at the client completes the task
// as a denial that runs nothing.
func TestMCPTasksAskThroughTheTask(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		f := newMRTRFixture(t, db, "--public-url", taskBase)
		tc := newTaskClient(f.c, f.sid, map[string]any{"url": map[string]any{}}, extTasks)

		disc := rpcPost(t, f.c, f.sid, map[string]any{"jsonrpc": "2.0", "id": 0, "method": "server/discover"})
		wantSchema(t, "core#/$defs/DiscoverResult", disc["result"])
		exts, _ := dig(t, disc, "result", "capabilities", "extensions").(map[string]any)
		for _, ext := range []string{extTasks, extToolApproval, "io.modelcontextprotocol/structured-authorization-denials"} {
			if exts[ext] == nil {
				t.Fatalf("server/discover does not advertise %s: %v", ext, exts)
			}
		}

		args := map[string]any{"env": "prod"}
		res := created(t, tc.call(t, 1, "deploy", args), "input_required")
		id := res["taskId"].(string)
		ev := f.stream.WaitFor(t, "response.elicitation_request", 10*time.Second).Map(t)
		if ev["elicitation_id"] != id {
			t.Fatalf("the task %s is not the prompt %v", id, ev["elicitation_id"])
		}
		link := taskBase + "/approve/" + f.sid + "/" + id
		if got := mustJSON(dig(t, res, "inputRequests", id, "params")); got != `{"message":"ask_deploy: Deploys need a person","mode":"url","url":"`+link+`"}` {
			t.Fatalf("input request = %s", got)
		}
		if again := created(t, tc.call(t, 2, "deploy", args), "input_required"); again["taskId"] != id {
			t.Fatalf("the same call made a second task: %v", again)
		}

		got := taskIn(t, tc.task(t, 3, "tasks/get", id, nil), "input_required")
		wantSchema(t, "tasks#/$defs/InputRequiredTask", got)
		if mustJSON(dig(t, got, "_meta", "io.modelcontextprotocol/authorization")) !=
			`{"authorizationContextId":"`+id+`","reason":"insufficient_authorization","remediation":"available","remediationHints":[{"type":"url","url":"`+link+`"}]}` {
			t.Fatalf("waiting task's denial = %v", got["_meta"])
		}
		tc.task(t, 4, "tasks/update", id, map[string]any{"inputResponses": map[string]any{id: map[string]any{"action": "accept"}}})
		got = taskIn(t, tc.task(t, 5, "tasks/get", id, nil), "working")
		if dig(t, got, "_meta", "io.modelcontextprotocol/authorization", "remediationHints") == nil {
			t.Fatalf("a working task must say why it waits: %v", got)
		}
		if n := f.runner.ToolRuns(); n != 0 {
			t.Fatalf("ran %d times before any approval", n)
		}

		f.resolve(t, id, "accept")
		for i := 6; i < 9; i++ {
			got = taskIn(t, tc.task(t, i, "tasks/get", id, nil), "completed")
			if text := mustJSON(dig(t, got, "result", "content")); !strings.Contains(text, `ran deploy {\"env\":\"prod\"}`) {
				t.Fatalf("completed result = %v", got)
			}
		}
		if n := f.runner.ToolRuns(); n != 1 {
			t.Fatalf("the approved call ran %d times", n)
		}

		// The person at the client says no: the task completes as a denial.
		id2 := created(t, tc.call(t, 9, "deploy", map[string]any{"env": "qa"}), "input_required")["taskId"].(string)
		tc.task(t, 10, "tasks/update", id2, map[string]any{"inputResponses": map[string]any{id2: map[string]any{"action": "decline"}}})
		got = taskIn(t, tc.task(t, 11, "tasks/get", id2, nil), "completed")
		if got["result"].(map[string]any)["isError"] != true {
			t.Fatalf("a declined task's result = %v", got)
		}
		wantDenial(t, dig(t, got, "result", "_meta"), "unavailable", "", "mcp_client")
		if n := f.runner.ToolRuns(); n != 1 {
			t.Fatalf("a declined call ran: %d runs", n)
		}
	})
}

// toolApprovalFlags start a server whose policies ask about deploy, with a runner.
func toolApprovalFlags(t *testing.T) (*fakeRunner, []string) {
	runner := echoRunner(t)
	return runner, []string{"--runner-url", runner.URL, "--policy-file", policyFile(t, mcpPolicies),
		"--session-secret", testSecret, "--public-url", taskBase}
}

// TestMCPToolApprovalTask: under the tool-approval extension the task stays working
// while the person decides in Gatehouse, saying why (the denial, with a task hint) and
// telling the model nothing ran yet; the task outlives a restart, and a person's
// decline completes it as a denial naming who and why, disposed as not executed.
func TestMCPToolApprovalTask(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		runner, flags := toolApprovalFlags(t)
		url := db.NewURL(t)
		srv := testserver.Start(t, url, flags...)
		c := srv.Client("")
		sid := c.CreateSession(t, c.CreateAgent(t), "", "")
		tc := newTaskClient(c, sid, nil, extTasks, extToolApproval)

		res := created(t, tc.call(t, 1, "deploy", map[string]any{"env": "prod"}), "working")
		id := res["taskId"].(string)
		if mustJSON(dig(t, res, "_meta", "io.modelcontextprotocol/authorization")) !=
			`{"authorizationContextId":"`+id+`","reason":"insufficient_authorization","remediation":"available","remediationHints":[{"type":"task"}]}` ||
			dig(t, res, "_meta", "io.modelcontextprotocol/model-immediate-response") == nil ||
			!strings.Contains(res["statusMessage"].(string), taskBase+"/approve/"+sid+"/"+id) {
			t.Fatalf("approval task = %v", res)
		}

		srv.Stop()
		srv = testserver.Start(t, url, flags...)
		tc.c = srv.Client("")
		taskIn(t, tc.task(t, 2, "tasks/get", id, nil), "working")
		if r := tc.c.Do(t, http.MethodPost, "/v1/sessions/"+sid+"/elicitations/"+id+"/resolve",
			map[string]any{"action": "decline", "content": map[string]any{"feedback": "not today"}}); r.Status != 202 {
			t.Fatalf("decline: %d %s", r.Status, r.Body)
		}
		got := taskIn(t, tc.task(t, 3, "tasks/get", id, nil), "completed")
		wantToolError(t, map[string]any{"result": got["result"]}, "Declined by local in Gatehouse: not today")
		d := wantDenial(t, dig(t, got, "result", "_meta"), "unavailable", "", "person")
		if d["decidedBy"] != "local" || dig(t, got, "result", "_meta", "net.openid.authzen/disposition") != "denied-not-executed" {
			t.Fatalf("declined task = %v", got)
		}
		if n := runner.ToolRuns(); n != 0 {
			t.Fatalf("a declined call ran %d times", n)
		}
	})
}

// TestMCPTaskRunsOnceAcrossReplicas: a task created on one replica and approved on the
// other is read on both at once; the tool runs exactly once, and both then report the
// same result.
func TestMCPTaskRunsOnceAcrossReplicas(t *testing.T) {
	db := testserver.PostgresDB(t)
	runner, flags := toolApprovalFlags(t)
	url := db.NewURL(t)
	a, b := testserver.Start(t, url, flags...), testserver.Start(t, url, flags...)
	ca, cb := a.Client(""), b.Client("")
	sid := ca.CreateSession(t, ca.CreateAgent(t), "", "")
	ta, tb := newTaskClient(ca, sid, nil, extTasks, extToolApproval), newTaskClient(cb, sid, nil, extTasks, extToolApproval)
	id := created(t, ta.call(t, 1, "deploy", map[string]any{"env": "prod"}), "working")["taskId"].(string)
	if r := cb.Do(t, http.MethodPost, "/v1/sessions/"+sid+"/elicitations/"+id+"/resolve", map[string]any{"action": "accept"}); r.Status != 202 {
		t.Fatalf("accept on B: %d %s", r.Status, r.Body)
	}
	var wg sync.WaitGroup
	statuses := make([]string, 8)
	for i := range statuses {
		tc := []*taskClient{ta, tb}[i%2]
		wg.Go(func() {
			r, err := tc.c.Send(t.Context(), http.MethodPost, "/v1/sessions/"+sid+"/mcp", tc.taskMsg(i, "tasks/get", id, nil))
			if err != nil || r.Status != http.StatusOK {
				statuses[i] = "error"
				return
			}
			statuses[i], _ = dig(t, r.JSON(t), "result", "status").(string)
		})
	}
	wg.Wait()
	for _, s := range statuses {
		if s != "working" && s != "completed" {
			t.Fatalf("concurrent reads answered %v", statuses)
		}
	}
	for i, tc := range []*taskClient{ta, tb} {
		got := taskIn(t, tc.task(t, 10+i, "tasks/get", id, nil), "completed")
		if !strings.Contains(mustJSON(got["result"]), "ran deploy") || dig(t, got, "result", "_meta", "net.openid.authzen/disposition") != "approved-executed" {
			t.Fatalf("replica %d: %v", i, got)
		}
	}
	if n := runner.ToolRuns(); n != 1 {
		t.Fatalf("the approved call ran %d times across two replicas", n)
	}
}

// TestMCPTaskCancelAndBadInput: tasks/cancel withdraws the prompt (a later accept
// changes nothing); a task of another session, an unknown id, a request that did not
// declare Tasks or names no task are refused with the errors the extension names, and
// none of them runs or changes anything.
func TestMCPTaskCancelAndBadInput(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		f := newMRTRFixture(t, db)
		tc := newTaskClient(f.c, f.sid, nil, extTasks, extToolApproval)
		id := created(t, tc.call(t, 1, "deploy", map[string]any{"env": "prod"}), "working")["taskId"].(string)
		f.stream.WaitFor(t, "response.elicitation_request", 10*time.Second)

		other := newTaskClient(f.c, f.other, nil, extTasks, extToolApproval)
		for i, method := range []string{"tasks/get", "tasks/cancel"} {
			wantTaskError(t, other.task(t, 10+i, method, id, nil), -32602, "Task not found")
		}
		wantTaskError(t, other.task(t, 12, "tasks/update", id, map[string]any{"inputResponses": map[string]any{id: map[string]any{"action": "decline"}}}), -32602, "Task not found")
		wantTaskError(t, tc.task(t, 13, "tasks/get", "elicit_00000000000000000000000000000000", nil), -32602, "Task not found")
		wantTaskError(t, tc.task(t, 14, "tasks/get", strings.Repeat("x", 4096), nil), -32602, "Task not found")
		bare := map[string]any{"jsonrpc": "2.0", "id": 15, "method": "tasks/get", "params": map[string]any{"taskId": id}}
		wantTaskError(t, rpcPost(t, f.c, f.sid, bare), -32021, "Tasks")
		noID := tc.taskMsg(16, "tasks/get", "", nil)
		delete(noID["params"].(map[string]any), "taskId")
		wantTaskError(t, rpcPost(t, f.c, f.sid, noID), -32602, "taskId")
		taskIn(t, tc.task(t, 17, "tasks/get", id, nil), "working")

		tc.task(t, 18, "tasks/cancel", id, nil)
		if ev := f.stream.WaitFor(t, "response.elicitation_resolved", 10*time.Second).Map(t); ev["elicitation_id"] != id {
			t.Fatalf("resolved %v, want the cancelled task's prompt", ev)
		}
		taskIn(t, tc.task(t, 19, "tasks/get", id, nil), "cancelled")
		if r := f.c.Do(t, http.MethodPost, "/v1/sessions/"+f.sid+"/elicitations/"+id+"/resolve", map[string]any{"action": "accept"}); r.JSON(t)["outcome"] != "already_resolved" {
			t.Fatalf("accepting a cancelled task's prompt: %s", r.Body)
		}
		taskIn(t, tc.task(t, 20, "tasks/get", id, nil), "cancelled")
		if n := f.runner.ToolRuns(); n != 0 {
			t.Fatalf("ran %d times", n)
		}
	})
}

// TestMCPTaskExpires: a task nobody decided completes as a timeout denial (asking again
// is the remedy) once its prompt expires, and is refused as expired once its time to
// live has run out.
func TestMCPTaskExpires(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		f := newMRTRFixture(t, db, "--elicitation-timeout", "1s", "--mcp-approval-ttl", "1s")
		tc := newTaskClient(f.c, f.sid, nil, extTasks, extToolApproval)
		res := created(t, tc.call(t, 1, "deploy", map[string]any{"env": "prod"}), "working")
		id := res["taskId"].(string)
		if res["ttlMs"] != float64(2000) {
			t.Fatalf("ttlMs = %v, want the prompt's wait plus the approval TTL", res["ttlMs"])
		}
		for {
			if ev := f.stream.WaitFor(t, "response.elicitation_resolved", 15*time.Second).Map(t); ev["elicitation_id"] == id {
				break
			}
		}
		// Until the TTL runs out the task reads as a timeout denial; then as expired.
		deadline := time.Now().Add(15 * time.Second)
		for i := 2; ; i++ {
			body := tc.task(t, i, "tasks/get", id, nil)
			if code, _ := rpcError(t, body); code != 0 {
				wantTaskError(t, body, -32602, "Task has expired")
				break
			}
			got := taskIn(t, body, "completed")
			wantDenial(t, dig(t, got, "result", "_meta"), "available", "", "timeout")
			if time.Now().After(deadline) {
				t.Fatal("the task never expired")
			}
		}
		if n := f.runner.ToolRuns(); n != 0 {
			t.Fatalf("ran %d times", n)
		}
	})
}
