package handlers_test

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
)

// Extension identifiers as clients declare them.
const (
	extTasks        = "io.modelcontextprotocol/tasks"
	extToolApproval = "io.modelcontextprotocol/tool-approval"
)

var (
	schemasOnce sync.Once
	schemas     *jsonschema.Compiler
	schemasErr  error
)

// wantSchema validates v against a definition of the official schemas kept in
// testdata/mcp: "tasks#/$defs/X" (the Tasks extension) or "core#/$defs/X" (MCP
// 2026-07-28).
func wantSchema(t *testing.T, def string, v any) {
	t.Helper()
	schemasOnce.Do(func() {
		c := jsonschema.NewCompiler()
		for name, file := range map[string]string{"tasks": "tasks.schema.json", "core": "schema-2026-07-28.json"} {
			raw, err := os.ReadFile("testdata/mcp/" + file)
			if err != nil {
				schemasErr = err
				return
			}
			doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
			if err != nil {
				schemasErr = err
				return
			}
			if m, ok := doc.(map[string]any); ok {
				delete(m, "$id") // addressed by the name below
			}
			if err := c.AddResource("file:///"+name+".json", doc); err != nil {
				schemasErr = err
				return
			}
		}
		schemas = c
	})
	if schemasErr != nil {
		t.Fatalf("schemas: %v", schemasErr)
	}
	name, frag, _ := strings.Cut(def, "#")
	sch, err := schemas.Compile("file:///" + name + ".json#" + frag)
	if err != nil {
		t.Fatalf("compile %s: %v", def, err)
	}
	raw, _ := json.Marshal(v)
	inst, _ := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err := sch.Validate(inst); err != nil {
		t.Fatalf("%s does not match %s: %v", raw, def, err)
	}
}

// taskClient speaks 2026-07-28 to a session's /mcp, declaring caps on every request.
type taskClient struct {
	c    *testserver.Client
	sid  string
	caps map[string]any
}

func newTaskClient(c *testserver.Client, sid string, elicitation map[string]any, exts ...string) *taskClient {
	e := map[string]any{}
	for _, x := range exts {
		e[x] = map[string]any{}
	}
	caps := map[string]any{"extensions": e}
	if elicitation != nil {
		caps["elicitation"] = elicitation
	}
	return &taskClient{c: c, sid: sid, caps: caps}
}

func (tc *taskClient) meta() map[string]any {
	return map[string]any{"io.modelcontextprotocol/protocolVersion": "2026-07-28",
		"io.modelcontextprotocol/clientCapabilities": tc.caps}
}

// call sends tools/call and returns the response.
func (tc *taskClient) call(t *testing.T, id any, tool string, args map[string]any) map[string]any {
	t.Helper()
	msg := rpcCall(id, tool, args, map[string]any{"_meta": tc.meta()})
	wantSchema(t, "core#/$defs/CallToolRequest", msg)
	return rpcPost(t, tc.c, tc.sid, msg)
}

// taskMethods maps a tasks/* method to its request and result definitions.
var taskMethods = map[string][2]string{
	"tasks/get":    {"GetTaskRequest", "GetTaskResult"},
	"tasks/update": {"UpdateTaskRequest", "UpdateTaskResult"},
	"tasks/cancel": {"CancelTaskRequest", "CancelTaskResult"},
}

// task sends a tasks/* request (checked against the schema) and returns the response;
// a result is checked against the method's result schema.
func (tc *taskClient) task(t *testing.T, id any, method, taskID string, params map[string]any) map[string]any {
	t.Helper()
	msg := tc.taskMsg(id, method, taskID, params)
	wantSchema(t, "tasks#/$defs/"+taskMethods[method][0], msg)
	body := rpcPost(t, tc.c, tc.sid, msg)
	if res, ok := body["result"]; ok {
		wantSchema(t, "tasks#/$defs/"+taskMethods[method][1], res)
	}
	return body
}

func (tc *taskClient) taskMsg(id any, method, taskID string, params map[string]any) map[string]any {
	p := map[string]any{"taskId": taskID, "_meta": tc.meta()}
	for k, v := range params {
		p[k] = v
	}
	return map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": p}
}

// created wants a CreateTaskResult (schema-checked) with status and returns it.
func created(t *testing.T, body map[string]any, status string) map[string]any {
	t.Helper()
	res, ok := body["result"].(map[string]any)
	if !ok || res["resultType"] != "task" || res["status"] != status {
		t.Fatalf("want a task %s, got %v", status, body)
	}
	wantSchema(t, "tasks#/$defs/CreateTaskResult", res)
	return res
}

// taskIn wants a tasks/get result with status and returns it; a completed task's
// result is checked as a CallToolResult.
func taskIn(t *testing.T, body map[string]any, status string) map[string]any {
	t.Helper()
	res, ok := body["result"].(map[string]any)
	if !ok || res["status"] != status {
		t.Fatalf("want task status %s, got %v", status, body)
	}
	if status == "completed" {
		wantSchema(t, "core#/$defs/CallToolResult", res["result"])
	}
	return res
}

// wantTaskError wants a JSON-RPC error code whose message contains contains.
func wantTaskError(t *testing.T, body map[string]any, code int, contains string) {
	t.Helper()
	if c, msg := rpcError(t, body); c != code || !strings.Contains(msg, contains) {
		t.Fatalf("want error %d containing %q, got %v", code, contains, body)
	}
}
