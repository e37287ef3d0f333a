package mcp

import (
	"encoding/json"
	"strings"
	"time"
)

// Extensions the proxy speaks beyond the core protocol.
const (
	// ExtensionTasks lets a server answer a tools/call with a task the client polls
	// (tasks/get), answers (tasks/update) and cancels (tasks/cancel).
	ExtensionTasks = "io.modelcontextprotocol/tasks"
	// ExtensionToolApproval: a call that needs approval is a task that stays working
	// while the approval happens out of band; on approval the server checks the call
	// again and runs it.
	ExtensionToolApproval = "io.modelcontextprotocol/tool-approval"
	// ExtensionToolApprovalAuthZEN is the identifier the tool-approval proposal itself
	// uses; a client declaring either is served the same way.
	ExtensionToolApprovalAuthZEN = "net.openid.authzen/tool-approval"
	// MetaDisposition says, on an approval task's result, whether the tool ran:
	// DispositionExecuted, DispositionDenied or DispositionExecutionError.
	MetaDisposition = "net.openid.authzen/disposition"
	// MetaModelImmediateResponse is text for the client's model while a task waits.
	MetaModelImmediateResponse = "io.modelcontextprotocol/model-immediate-response"
)

// Dispositions of an approval task's result.
const (
	DispositionExecuted       = "approved-executed"
	DispositionDenied         = "denied-not-executed"
	DispositionExecutionError = "execution-error"
)

// Task statuses.
const (
	TaskWorking       = "working"
	TaskInputRequired = "input_required"
	TaskCompleted     = "completed"
	TaskFailed        = "failed"
	TaskCancelled     = "cancelled"
)

// Task is a task as the client sees it.
type Task struct {
	ID            string
	Status        string
	StatusMessage string
	CreatedAt     time.Time
	UpdatedAt     time.Time
	// TTL is how long from CreatedAt the task can be polled.
	TTL time.Duration
	// PollInterval is the pace the client is asked to poll at.
	PollInterval time.Duration
	// InputRequests are outstanding (input_required).
	InputRequests map[string]any
	// Result is the final result (completed).
	Result map[string]any
	// Error is the JSON-RPC error the call failed with (failed).
	Error json.RawMessage
	// Meta is the task's _meta (the authorization denial while it waits).
	Meta map[string]any
}

func (t Task) fields(resultType string) map[string]any {
	m := map[string]any{
		"resultType": resultType, "taskId": t.ID, "status": t.Status,
		"createdAt":     t.CreatedAt.UTC().Format(time.RFC3339Nano),
		"lastUpdatedAt": t.UpdatedAt.UTC().Format(time.RFC3339Nano),
		"ttlMs":         t.TTL.Milliseconds(),
	}
	if t.PollInterval > 0 {
		m["pollIntervalMs"] = t.PollInterval.Milliseconds()
	}
	if t.StatusMessage != "" {
		m["statusMessage"] = t.StatusMessage
	}
	switch t.Status {
	case TaskInputRequired:
		m["inputRequests"] = t.InputRequests
	case TaskCompleted:
		m["result"] = t.Result
	case TaskFailed:
		m["error"] = t.Error
	}
	if len(t.Meta) > 0 {
		m["_meta"] = t.Meta
	}
	return m
}

// CreateTaskResult answers a tools/call with the task that holds it.
func CreateTaskResult(t Task) map[string]any { return t.fields("task") }

// GetTaskResult answers tasks/get.
func GetTaskResult(t Task) map[string]any { return t.fields("complete") }

// ApprovalInputRequests are the task's input requests while it asks the client for an
// approval: one, keyed by the prompt's id (which is also the task's id).
func ApprovalInputRequests(a Approval) map[string]any {
	return map[string]any{a.ElicitationID: map[string]any{"method": "elicitation/create", "params": a.ElicitParams()}}
}

// TaskParams are the params of tasks/get, tasks/update and tasks/cancel.
type TaskParams struct {
	TaskID string
	// InputResponses are tasks/update's answers, keyed by input request.
	InputResponses map[string]json.RawMessage
}

// ParseTaskParams reads tasks/* params: a taskId string is required, and tasks/update
// needs an inputResponses object.
func ParseTaskParams(method string, params json.RawMessage) (TaskParams, *Error) {
	var p struct {
		TaskID         *string                    `json:"taskId"`
		InputResponses map[string]json.RawMessage `json:"inputResponses"`
	}
	if err := json.Unmarshal(params, &p); err != nil || p.TaskID == nil || strings.TrimSpace(*p.TaskID) == "" {
		return TaskParams{}, Errorf(CodeInvalidParams, "%s needs a taskId string", method)
	}
	if method == "tasks/update" && p.InputResponses == nil {
		return TaskParams{}, Errorf(CodeInvalidParams, "tasks/update needs an inputResponses object")
	}
	return TaskParams{TaskID: *p.TaskID, InputResponses: p.InputResponses}, nil
}

// ResponseAction reads one input response: its action and, for the approval form,
// whether approved was false ("" when unreadable).
func ResponseAction(raw json.RawMessage) (action string, notApproved bool) {
	var r struct {
		Action  string `json:"action"`
		Content struct {
			Approved *bool `json:"approved"`
		} `json:"content"`
	}
	if json.Unmarshal(raw, &r) != nil {
		return "", false
	}
	return r.Action, r.Content.Approved != nil && !*r.Content.Approved
}

// TaskNotFoundError answers a task id that names no task of this client: unknown,
// another session's or another person's (which must not be told apart).
func TaskNotFoundError() *Error {
	return Errorf(CodeInvalidParams, "Failed to retrieve task: Task not found")
}

// TaskExpiredError answers a task whose time to live has run out.
func TaskExpiredError() *Error {
	return Errorf(CodeInvalidParams, "Failed to retrieve task: Task has expired")
}

// MissingTasksCapabilityError (-32021) refuses tasks/* from a request that did not
// declare the Tasks extension.
func MissingTasksCapabilityError() *Error {
	return &Error{Code: CodeMissingCapability, Message: "Missing required client capability: the Tasks extension",
		Data: map[string]any{"requiredCapabilities": map[string]any{"extensions": map[string]any{ExtensionTasks: map[string]any{}}}}}
}
