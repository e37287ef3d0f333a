package prompt

import (
	"github.com/gatehouse-dev/gatehouse/internal/risk"
	"sort"
	"strconv"
	"strings"

	"github.com/gatehouse-dev/gatehouse/internal/diff"
	"github.com/gatehouse-dev/gatehouse/models"
)

// Summary is a prompt in a few lines of plain text, for a notification: who asks, what
// the tool call does, and whether one tap may answer it. Its strings are the agent's,
// unbounded and with their controls: the caller bounds them and makes them visible.
type Summary struct {
	// Vendor is who asks ("Claude Code", "Codex", "MCP server").
	Vendor string
	// Tool is the tool's name as the agent gives it ("" for prompts that are no tool call).
	Tool string
	// Message is the prompt's one-line request, without its markdown emphasis.
	Message string
	// Detail says what the call does, by its kind: "run `make test`", "edit
	// /repo/a.go" and the lines that change, "write /repo/NOTES.md" and its content,
	// "fetch https://…", "call mcp__db__query(…)", the questions, the plan; else the
	// request's preview.
	Detail string
	// Answerable reports that the prompt may be approved from a notification: the
	// inbox would let a person approve it from its card (a plain approve/reject whose
	// card shows all of it, Prompt.QuickApprove).
	Answerable bool
	// Risk is the request's rating (nil when it has none).
	Risk *risk.Assessment
	// Cut reports that the approval page's card shows less of the request than it
	// holds (or the message is cut): the full request is in Gatehouse.
	Cut bool
}

// Summarize says what a prompt asks, for a notification. It builds no page and renders
// nothing: it lays the request out within the page's and the card's bounds only to
// know whether the card would show all of it, which decides whether one tap may
// answer.
func Summarize(origin string, params map[string]any) Summary {
	if params == nil {
		params = map[string]any{}
	}
	msg, msgCut := messageOf(params)
	kind := formOf(params).kind
	v := show(params, kind)
	s := Summary{Vendor: vendorOf(origin, params), Tool: str(params["tool_name"]),
		Message: strings.ReplaceAll(msg, "**", ""), Detail: summaryDetail(params),
		Cut: v.previewCut || v.cut || msgCut}
	s.Risk = risk.Of(params)
	// High and critical requests are never answered from a notification button.
	s.Answerable = kind == KindPlain && !s.Cut && !(s.Risk != nil && s.Risk.Level.AtLeast(risk.High))
	if s.Detail == "" {
		s.Detail = v.preview
	}
	return s
}

// summaryDetail says what a prompt's call does by its kind ("" when its kind has
// nothing to say: the caller shows the preview).
func summaryDetail(params map[string]any) string {
	input := mapOf(params["tool_input"])
	if qs := questionList(params); len(qs) > 0 {
		lines := []string{strconv.Itoa(len(qs)) + plural(len(qs), " question:", " questions:")}
		for _, q := range qs {
			if text := strings.TrimSpace(str(mapOf(q)["question"])); text != "" {
				lines = append(lines, text)
			}
		}
		return strings.Join(lines, "\n")
	}
	if plan, ok := params["exit_plan_mode"]; ok && plan != nil {
		if text := planText(plan); text != "" {
			return "plan: " + text
		}
		return "plan"
	}
	if fc := mapOf(params["fileChanges"]); len(fc) > 0 {
		return "change " + strings.Join(sortedKeys(fc), ", ")
	}
	in := toolInput{m: input, used: map[string]bool{}}
	switch ToolKindOf(params) {
	case models.KindShell:
		if cmd := firstOf(str(input["command"]), str(params["command"])); cmd != "" {
			return "run `" + cmd + "`"
		}
	case models.KindEdit:
		return editSummary(in)
	case models.KindWrite:
		if p := in.path(); p != "" {
			return strings.TrimRight("write "+p+"\n"+str(input["content"]), "\n")
		}
	case models.KindRead:
		if p := in.path(); p != "" {
			return "read " + p
		}
	case models.KindFetch:
		if u := str(input["url"]); u != "" {
			return "fetch " + u
		}
	case models.KindMCP:
		if name := str(params["tool_name"]); name != "" {
			args := ""
			if len(input) > 0 {
				args = compactJSON(input)
			}
			return "call " + name + "(" + args + ")"
		}
	}
	if cmd := str(params["command"]); cmd != "" && input == nil {
		// A command approval whose params hold the command (Codex app-server).
		return "run `" + cmd + "`"
	}
	return ""
}

// editSummary is "edit <path>" and the lines an edit removes (-) and adds (+).
func editSummary(in toolInput) string {
	var paths []string
	var lines []diff.Line
	add := func(l []diff.Line, _ bool) { lines = append(lines, l...) }
	switch p := in.path(); {
	case in.m["edits"] != nil:
		paths = append(paths, p)
		for _, e := range listOf(in.m["edits"]) {
			m := mapOf(e)
			add(diff.Compute(str(m["old_string"]), str(m["new_string"])))
		}
	case in.has("old_string") || in.has("new_string"):
		paths = append(paths, p)
		add(diff.Compute(str(in.m["old_string"]), str(in.m["new_string"])))
	case in.has("notebook_path") || in.has("new_source"):
		paths = append(paths, p)
		add(diff.Added(str(in.m["new_source"])))
	default:
		for _, k := range patchKeys {
			text := str(in.m[k])
			if text == "" {
				continue
			}
			files, ok := diff.Patch(text)
			if !ok {
				files, _ = diff.Unified(text)
			}
			for _, f := range files {
				paths = append(paths, f.Path)
				lines = append(lines, f.Lines...)
			}
			break
		}
		if len(paths) == 0 && p != "" {
			paths = append(paths, p)
		}
	}
	paths = nonEmpty(paths)
	if len(paths) == 0 && len(lines) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("edit " + strings.Join(paths, ", "))
	for _, l := range lines {
		switch l.Op {
		case diff.Del:
			b.WriteString("\n-" + l.Text)
		case diff.Add:
			b.WriteString("\n+" + l.Text)
		}
	}
	return strings.TrimSpace(b.String())
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func nonEmpty(list []string) []string {
	out := list[:0:0]
	for _, s := range list {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

func firstOf(list ...string) string {
	for _, s := range list {
		if s != "" {
			return s
		}
	}
	return ""
}
