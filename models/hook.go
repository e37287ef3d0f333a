package models

// ToolKind is what sort of thing a parked tool call does, whatever the agent calls
// the tool: rules, risk and the views match on it, so an agent that maps its tools
// onto kinds gets all of them without naming its tools anywhere else.
type ToolKind string

// Tool kinds.
const (
	KindShell    ToolKind = "shell"    // a shell command line (input "command")
	KindEdit     ToolKind = "edit"     // an edit of an existing file (old and new text)
	KindWrite    ToolKind = "write"    // a whole file written
	KindRead     ToolKind = "read"     // a file read
	KindFetch    ToolKind = "fetch"    // a URL fetched (input "url")
	KindMCP      ToolKind = "mcp"      // an MCP server's tool
	KindQuestion ToolKind = "question" // the agent asks the person questions
	KindPlan     ToolKind = "plan"     // the agent asks to leave plan mode
	KindOther    ToolKind = "other"    // anything else
)

// HookTool is the tool call a hook is about.
type HookTool struct {
	// Name is the tool's name as rules store it (Claude's tool_name, "shell" for a
	// Codex app-server command).
	Name string
	// Kind is what the tool does.
	Kind ToolKind
	// Input is what the rules compare: the tool's input (for some agents a part of it).
	Input map[string]any
}

// HookRequest is one agent hook payload, decoded by its agent (internal/agents) into
// what Gatehouse needs to park it, whatever the agent: where it parks, what the
// prompt shows, what rules match and how each way a wait can end is answered in the
// agent's own format.
type HookRequest struct {
	// Event is the hook event (or JSON-RPC method) the payload is.
	Event string
	// Origin is the prompt's origin (OriginClaudePermission, …).
	Origin string
	// Vendor is the agent's name for people ("Claude Code", "Codex").
	Vendor string

	// ExternalSession is the agent's own session id, for zero-config routes: the
	// Gatehouse session is found or created by it ("" when the agent has none; it
	// then parks only on a session route). ExternalKey is what is stored for it
	// (namespaced when agents could collide; ExternalSession when empty).
	ExternalSession string
	ExternalKey     string
	// SubAgent and SubAgentType name a sub-agent: such a payload parks on a child
	// session "<type>:<id>" under the external session.
	SubAgent     string
	SubAgentType string
	// Cwd is the agent's working directory, when it says.
	Cwd string

	// ReattachID is a prompt id the payload carries to re-attach to ("" when none);
	// IDPrefix and IDKey, when set, make a deterministic prompt id instead
	// (ids.Deterministic(IDPrefix, IDKey(session id))), so a retry re-attaches.
	ReattachID string
	IDPrefix   string
	IDKey      func(sessionID string) []byte
	// Fingerprint, when set, is the hash of the request a deterministic id was made
	// for: re-attaching a different request under the same id is refused.
	Fingerprint string

	// Params are the prompt's params; RequestedSchema, when set, is the raw schema
	// whose property order the prompt keeps.
	Params          map[string]any
	RequestedSchema []byte
	// Tool is the tool call rules match on; nil for prompts rules leave alone
	// (questions, forms).
	Tool *HookTool

	// Answer is the agent's answer for a verdict; by is who gave it (a deny without
	// feedback names them: Verdict.DenyReason).
	Answer func(v Verdict, by string) any
	// NoVerdict is the answer when the wait ends without a verdict; nil is an empty 200.
	NoVerdict any
	// InterruptOnDecline asks the runner to interrupt the agent's turn on a decline.
	InterruptOnDecline bool

	// Refusal, when set, makes the payload an agent's report that its own check refused
	// a tool call (Claude Code's PermissionDenied, after auto mode refused): escalated to
	// a person when the server escalates refusals, and an approval lets the agent retry
	// exactly that call once (internal/grants). Answer(decline) lets the refusal stand.
	Refusal *HookRefusal
	// MayRetry marks a tool call that may be the retry of an escalated refusal (Claude
	// Code's PreToolUse): a live grant for it is spent and answered Answer(accept) at
	// once.
	MayRetry bool
	// Notice, when set, makes the payload a notice that the agent waits for its person
	// (Claude Code's Notification): forwarded to their notification channels, never
	// parked.
	Notice *HookNotice

	// Retire, when set, makes the payload a notice that a request was settled
	// elsewhere, not a request to park: the session's pending prompts of this
	// Origin whose params Retire matches are cancelled.
	Retire func(params map[string]any) bool
	// RetiredBy is who the retired prompts record as having cancelled them.
	RetiredBy string
}

// HookRefusal is an agent's own refusal of a tool call (HookRequest.Refusal).
type HookRefusal struct {
	// Reason is the agent's reason for refusing, as it gave it.
	Reason string
}

// HookNotice is an agent's notice that it waits for its person (HookRequest.Notice).
type HookNotice struct {
	// Message is the agent's own text ("Claude needs your permission to use Bash");
	// Title and Type its title and kind of notice, when it says.
	Message, Title, Type string
}
