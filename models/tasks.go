package models

import (
	"encoding/json"
	"time"
)

// Modes of an MCP task: how the client is asked while the task waits for a person.
const (
	// TaskModeInput: the task is input_required, handing the client the approval
	// request (a URL, or a form) until the client answers it; then working.
	TaskModeInput = "input"
	// TaskModeOutOfBand: the task stays working while the person decides in Gatehouse
	// (the tool-approval extension, or a client that declared no elicitation mode).
	TaskModeOutOfBand = "out_of_band"
)

// Outcomes of an MCP task, once one is recorded.
const (
	TaskCompleted = "completed"
	TaskFailed    = "failed"
	TaskCancelled = "cancelled"
)

// MCPTask is an MCP task holding a tool call that needs a person's approval. Its ID is
// the call's prompt's id; where the approval stands is that prompt's row.
type MCPTask struct {
	ID        string `gorm:"primaryKey"`
	SessionID string `gorm:"column:session_id"`
	// Person is who called the tool: only they may read or steer the task, and the
	// tool runs as them.
	Person string `gorm:"column:person"`
	Tool   string `gorm:"column:tool"`
	// Arguments are the call's arguments as the client sent them (the approval
	// covers exactly these). Strings, not json.RawMessage: Postgres hands TEXT back as
	// a string, which a RawMessage cannot scan.
	Arguments string    `gorm:"column:arguments"`
	Mode      string    `gorm:"column:mode"`
	CreatedAt time.Time `gorm:"column:created_at"`
	UpdatedAt time.Time `gorm:"column:updated_at"`
	// ExpiresAt ends the task: after it every tasks/* call is told it expired, and
	// nothing runs.
	ExpiresAt time.Time `gorm:"column:expires_at"`
	// AnsweredAt is when the client answered the task's input request.
	AnsweredAt *time.Time `gorm:"column:answered_at"`
	// ClaimedAt is when the outcome was claimed: the tool began to run, or the task
	// was cancelled or declined at the client. Set at most once.
	ClaimedAt *time.Time `gorm:"column:claimed_at"`
	// Outcome is TaskCompleted, TaskFailed or TaskCancelled once recorded.
	Outcome *string `gorm:"column:outcome"`
	// Result is the CallToolResult (completed) or the JSON-RPC error (failed).
	Result *string `gorm:"column:result"`
}

// TableName is the table's name.
func (MCPTask) TableName() string { return "mcp_tasks" }

// TaskOutcome is what a task ended with.
type TaskOutcome struct {
	// Outcome is TaskCompleted, TaskFailed or TaskCancelled.
	Outcome string
	// Result is the CallToolResult or JSON-RPC error; nil for a cancel.
	Result json.RawMessage
}
