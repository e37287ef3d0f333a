// Package prompt turns a pending elicitation's published params into what the approval
// UI shows — who asks, what exactly, and which form answers it — and turns a submitted
// form back into a validated verdict (an MCP ElicitationResult's action and content).
//
// It knows every prompt shape Gatehouse publishes (Claude tools, AskUserQuestion,
// ExitPlanMode, Codex approvals and questions, MCP forms and URL-mode prompts, policy
// asks) but nothing about HTTP, sessions or storage: the handlers feed it params and
// url.Values, the views render the structs it returns.
package prompt

import (
	"github.com/gatehouse-dev/gatehouse/internal/risk"
	"sort"
	"strings"

	"github.com/gatehouse-dev/gatehouse/internal/markdown"
	"github.com/gatehouse-dev/gatehouse/models"
)

// Kind is the shape of form a prompt needs.
type Kind string

// Prompt kinds.
const (
	// KindPlain is approve / reject with an optional reason (tool calls, commands,
	// file changes, policy asks).
	KindPlain Kind = "plain"
	// KindQuestion is AskUserQuestion (or Codex requestUserInput): one choice per question.
	KindQuestion Kind = "question"
	// KindForm is an MCP form built from requestedSchema.
	KindForm Kind = "form"
	// KindPlan is ExitPlanMode: read the plan, approve or reject with feedback.
	KindPlan Kind = "plan"
	// KindURL is an MCP URL-mode prompt: consent to open a page on another host.
	KindURL Kind = "url"
)

// Form control names shared by the views and Submit.
const (
	FieldAction   = "action"
	FieldFeedback = "feedback"
	// ActionAcceptRemember is the "approve and remember" button's action value.
	ActionAcceptRemember = "accept_remember"
)

// MaxFeedback is the longest reason a person may send back to the agent, in bytes.
const MaxFeedback = 4000

// Detail is one labelled fact about the request (command, cwd, reason…). Block details
// are shown preformatted (commands, JSON).
type Detail struct {
	Label  string
	Value  string
	Block  bool
	TestID string
}

// Prompt is one pending request as the approval UI presents it. After Submit it also
// holds what the person entered and the errors to show next to each field.
type Prompt struct {
	Kind Kind
	// ToolKind is what the tool call does (models.ToolKind, as the agent recorded it
	// or as KindOfName knows it), so the page words its heading by what the call
	// does and never by a vendor's tool name.
	ToolKind models.ToolKind
	// Vendor names who is asking ("Claude Code", "Codex", "MCP server") — never an
	// internal stamp such as claude_native_permission.
	Vendor string
	// Policy is the deciding policy's name, for prompts a configured policy raised.
	Policy string
	// Message is the one-line request; it may hold **bold** markdown.
	Message  string
	ToolName string
	// ServerName is the MCP server behind an MCP prompt.
	ServerName string
	Details    []Detail

	Questions []Question
	Fields    []Field
	// PlanHTML is the sanitized HTML of an ExitPlanMode plan; PlanText the plan as the
	// agent sent it, shown beside the rendering so nothing in it can hide.
	PlanHTML string
	PlanText string
	// URL and URLHost are a URL-mode prompt's target; URLSafe is false when the URL is
	// not http(s), in which case it is shown as text and never linked. URLHost is the
	// host as the browser resolves it (punycode, xn--…), so a look-alike Unicode name
	// cannot pass for another; URLHostUnicode is the Unicode form when it differs.
	URL            string
	URLHost        string
	URLHostUnicode string
	URLSafe        bool

	// Cut reports that the page shows less than the agent sent (a long message,
	// command or plan, deep or large tool input): the raw view has the rest.
	Cut bool
	// Preview is the short plain-text preview a list card shows; PreviewCut reports
	// that the card shows less than the request holds, so it must not be approved
	// from the list without opening it.
	Preview    string
	PreviewCut bool

	// Tool shows the tool call in its own terms on the approval page (diffs, a URL,
	// labelled fields) where the details alone would show raw JSON; nil otherwise.
	// CardTool is the same call within a list card's bounds (nil: not a tool call).
	Tool     *Tool
	CardTool *Tool

	// Risk is the request's rating (internal/risk), nil for a prompt stored without
	// one.
	Risk *risk.Assessment
	// CanRemember offers "approve and remember": the agent offered something to keep
	// (Suggestions is not empty).
	CanRemember bool
	// Suggestions are what "approve and remember" can keep, in the order a verdict's
	// content.remember.suggestion names them.
	Suggestions []Suggestion
	// Feedback is the reason typed before a failed submit, shown again.
	Feedback string
	// FormError is an error about the whole submission (not one field).
	FormError string

	// approvalFlag is the boolean property of the MCP approval schema
	// ({"approved": boolean}) shown as a plain prompt; accept sets it to true.
	approvalFlag string
	schema       map[string]any
	// origin and params are what the prompt was described from, for CheckRemember.
	origin string
	params map[string]any
}

// Describe builds the UI view of a prompt from its origin and params. It never fails:
// odd or hostile params degrade to a plain approve/reject prompt showing the preview.
func Describe(origin string, params map[string]any, md *markdown.Renderer) *Prompt {
	if params == nil {
		params = map[string]any{}
	}
	p := &Prompt{
		Vendor:     vendorOf(origin, params),
		ToolName:   str(params["tool_name"]),
		ServerName: str(params["server_name"]),
	}
	if origin == models.OriginPolicy {
		p.Policy = str(params["policy_name"])
	}
	p.Message, p.Cut = messageOf(params)
	f := formOf(params)
	p.Kind, p.approvalFlag, p.Fields, p.schema = f.kind, f.approvalFlag, f.fields, f.schema
	p.ToolKind = ToolKindOf(params)
	v := show(params, p.Kind)
	p.Tool, p.Details, p.CardTool, p.Preview = v.tool, v.details, v.card, v.preview
	p.Cut = p.Cut || v.cut
	p.CanRemember = canRemember(origin, params)

	switch p.Kind {
	case KindQuestion:
		p.Questions = parseQuestions(questionList(params))
		p.CanRemember = false
	case KindPlan:
		p.CanRemember = false
		plan := planText(params["exit_plan_mode"])
		if plan == "" {
			js, _ := BoundedJSON(params["exit_plan_mode"], MaxRendered)
			plan = "```json\n" + js + "\n```"
		}
		plan, cut := Cut(plan, MaxRendered)
		p.Cut = p.Cut || cut
		p.PlanText = plan
		p.PlanHTML = Visible(md.HTML(plan)) // markers are plain text, safe inside HTML
	case KindURL:
		p.describeURL(str(params["url"]))
	case KindForm:
		p.CanRemember = false
	}
	p.origin, p.params = origin, params
	p.Risk = risk.Of(params)
	if p.Risk != nil && p.Risk.Level == risk.Critical {
		// A critical request is decided once, on its page: never kept as a rule.
		p.CanRemember = false
	}
	if p.CanRemember {
		// Nothing is pre-selected: keeping a rule is a choice the person makes;
		// "Approve and remember" with none chosen keeps the first (submitRemember).
		p.Suggestions = suggestionsOf(origin, params)
	}
	p.CanRemember = len(p.Suggestions) > 0
	p.PreviewCut = v.previewCut || p.Cut
	return p
}

// Risky reports a request of high or critical risk: it is approved only on its own
// page, never in bulk or from a notification button.
func (p *Prompt) Risky() bool { return p.Risk != nil && p.Risk.Level.AtLeast(risk.High) }

// messageOf is the prompt's one-line request within MaxMessage, and whether it was cut.
func messageOf(params map[string]any) (string, bool) {
	m := str(params["message"])
	if m == "" {
		m = "An agent asks for your approval"
	}
	return Cut(m, MaxMessage)
}

// form is the shape of form a prompt needs, with what a form of that shape reads.
type form struct {
	kind Kind
	// approvalFlag is set for the MCP approval schema shown as a plain prompt;
	// fields and schema for an MCP form.
	approvalFlag string
	fields       []Field
	schema       map[string]any
}

// formOf chooses a prompt's form by what its params carry: questions, a plan, a
// URL-mode target, a schema with fields; else a plain approve/reject.
func formOf(params map[string]any) form {
	switch {
	case len(questionList(params)) > 0:
		return form{kind: KindQuestion}
	case params["exit_plan_mode"] != nil:
		return form{kind: KindPlan}
	case isURLMode(params):
		return form{kind: KindURL}
	}
	f := form{kind: KindPlain}
	if schema, ok := params["requestedSchema"].(map[string]any); ok {
		if flag := approvalFlag(schema); flag != "" {
			f.approvalFlag = flag
		} else if fields := parseFields(schema, listOf(params[ParamPropertyOrder])); len(fields) > 0 {
			f = form{kind: KindForm, fields: fields, schema: schema}
		}
	}
	return f
}

// shown is what the approval page and a list card show of a prompt's request.
type shown struct {
	tool    *Tool // the page's tool view (nil: the details show the call)
	details []Detail
	card    *Tool // the card's tool view (nil: the card shows preview)
	preview string
	// cut: the page's details or tool view show less than the request holds (not
	// counting the message or a plan); previewCut: the card does.
	cut, previewCut bool
}

// show lays out a prompt's request for the page and for a card, within their bounds.
func show(params map[string]any, kind Kind) shown {
	var v shown
	var hide map[string]bool
	v.tool, hide = pageTool(params)
	v.details, v.cut = details(params, hide)
	v.cut = v.cut || (v.tool != nil && v.tool.Cut)
	if len(v.details) == 0 && kind == KindPlain {
		if prev := str(params["content_preview"]); prev != "" {
			prev, cut := Cut(prev, MaxText)
			v.cut = v.cut || cut
			v.details = append(v.details, Detail{Label: "Request", Value: prev, Block: true, TestID: "preview"})
		}
	}
	v.preview, v.previewCut = cardPreview(params)
	if v.card = DescribeTool(params, true); v.card != nil {
		v.previewCut = v.card.Cut
	}
	return v
}

// AllowsFeedback reports whether rejecting can carry a reason back to the agent.
func (p *Prompt) AllowsFeedback() bool {
	return p.Kind == KindPlain || p.Kind == KindPlan || p.Kind == KindQuestion
}

// QuickApprove reports whether the prompt can be approved with one click from a list:
// nothing to fill in first, and the card shows all of it. A card whose preview is cut
// sends the person to the full page instead, so a long input cannot hide its tail
// (the dangerous part, say) behind a one-click Approve.
func (p *Prompt) QuickApprove() bool { return p.Kind == KindPlain && !p.PreviewCut }

// NeedsReview reports that the prompt has nothing to fill in but the list shows only
// part of it: the list offers "Open to review" instead of Approve.
func (p *Prompt) NeedsReview() bool { return p.Kind == KindPlain && p.PreviewCut }

func vendorOf(origin string, params map[string]any) string {
	if v := strings.TrimSpace(str(params["vendor"])); v != "" {
		return v
	}
	switch origin {
	case models.OriginClaudePermission, models.OriginClaudePreToolUse, models.OriginClaudeElicit, models.OriginClaudeDenied:
		return "Claude Code"
	case models.OriginCodex:
		return "Codex"
	case models.OriginPolicy:
		return "Gatehouse policy"
	case models.OriginMCPEvent, models.OriginMCPInput:
		return "MCP server"
	}
	return "Agent"
}

// canRemember: Codex says so per method (allow_remember); Claude's PermissionRequest
// can keep one of its permission_suggestions for any tool but a question or a plan.
// What can be kept is suggestionsOf's to say.
func canRemember(origin string, params map[string]any) bool {
	if v, ok := params["allow_remember"].(bool); ok {
		return v
	}
	if origin != models.OriginClaudePermission || str(params["tool_name"]) == "" {
		return false
	}
	switch ToolKindOf(params) {
	case models.KindQuestion, models.KindPlan:
		return false
	}
	return true
}

// isURLMode: a URL-mode prompt whose URL points somewhere else. Policy prompts in URL
// mode point at this very approval page, which needs no consent step.
func isURLMode(params map[string]any) bool {
	if str(params["mode"]) != "url" {
		return false
	}
	u := str(params["url"])
	return u != "" && !strings.HasPrefix(u, "/approve/")
}

func planText(v any) string {
	m, _ := v.(map[string]any)
	return strings.TrimSpace(str(m["plan"]))
}

// approvalFlag recognises the MCP approval schema {"approved": boolean} (the only
// property, a boolean): such prompts are a plain approve/reject.
func approvalFlag(schema map[string]any) string {
	props, _ := schema["properties"].(map[string]any)
	if len(props) != 1 {
		return ""
	}
	for name, v := range props {
		m, _ := v.(map[string]any)
		if str(m["type"]) == "boolean" && (name == "approved" || name == "approve" || name == "confirm" || name == "confirmed") {
			return name
		}
	}
	return ""
}

// details lists the facts worth showing, most important first, within MaxRendered
// bytes in all, leaving out those the page's tool view shows (by test id); it reports
// whether any was cut.
func details(params map[string]any, shown map[string]bool) ([]Detail, bool) {
	var out []Detail
	left, cut := MaxRendered, false
	add := func(label, value string, block bool, id string) {
		if strings.TrimSpace(value) == "" || shown[id] {
			return
		}
		limit := min(MaxText, left)
		if !block {
			limit = min(MaxMessage, left)
		}
		if limit <= 0 {
			cut = true
			return
		}
		v, c := Cut(value, limit)
		cut = cut || c
		left -= htmlLen(v)
		out = append(out, Detail{Label: label, Value: v, Block: block, TestID: id})
	}
	addJSON := func(label string, v any, id string) {
		if shown[id] {
			return
		}
		if left <= 0 {
			cut = true
			return
		}
		js, c := BoundedJSON(v, left)
		cut = cut || c
		left -= htmlLen(js)
		out = append(out, Detail{Label: label, Value: js, Block: true, TestID: id})
	}
	input, _ := params["tool_input"].(map[string]any)
	command := str(params["command"])
	if command == "" {
		command = str(input["command"])
	}
	add("Command", command, true, "command")
	for _, k := range []string{"file_path", "notebook_path", "path"} {
		if v := str(input[k]); v != "" {
			add("File", v, false, "file")
			break
		}
	}
	if nc, ok := params["networkApprovalContext"].(map[string]any); ok {
		add("Network access to", strings.TrimSpace(str(nc["protocol"])+" "+str(nc["host"])), false, "network")
	}
	add("Working directory", str(params["cwd"]), false, "cwd")
	add("Reason", str(params["reason"]), false, "reason")
	add("Write access under", str(params["grantRoot"]), false, "grant-root")
	if fc, ok := params["fileChanges"].(map[string]any); ok && len(fc) > 0 {
		paths := make([]string, 0, len(fc))
		for k, v := range fc {
			kind := str(mapOf(v)["type"])
			if kind != "" {
				k += " (" + kind + ")"
			}
			paths = append(paths, k)
		}
		sort.Strings(paths)
		add("Files", strings.Join(paths, "\n"), true, "files")
	}
	if perms, ok := params["permissions"]; ok && perms != nil {
		addJSON("Permissions", perms, "permissions")
	}
	if input != nil && params["exit_plan_mode"] == nil && params["ask_user_question"] == nil {
		add("Description", str(input["description"]), false, "description")
		if !onlyCommand(input) {
			addJSON("Tool input", input, "tool-input")
		}
	}
	if s := str(params["agent_type"]); s != "" {
		add("Sub-agent type", s, false, "agent-type")
	}
	if s := str(params["permission_mode"]); s != "" && s != "default" {
		add("Permission mode", s, false, "permission-mode")
	}
	return out, cut
}

// onlyCommand: a tool input that is just a command string (and its description) is
// fully shown by the Command detail; anything more is shown whole.
func onlyCommand(input map[string]any) bool {
	if _, ok := input["command"].(string); !ok {
		return false
	}
	for k, v := range input {
		if k == "command" {
			continue
		}
		if _, ok := v.(string); k != "description" || !ok {
			return false
		}
	}
	return true
}

func listOf(v any) []any {
	switch l := v.(type) {
	case []any:
		return l
	case []string:
		out := make([]any, len(l))
		for i, s := range l {
			out[i] = s
		}
		return out
	}
	return nil
}

func mapOf(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

func str(v any) string {
	s, _ := v.(string)
	return s
}
