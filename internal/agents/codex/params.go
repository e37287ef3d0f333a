package codex

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/gatehouse-dev/gatehouse/internal/agents/hookkit"
)

// messageArgLimit bounds how much of a command or path a one-line message repeats; the
// whole text is in the params and the preview.
const messageArgLimit = 200

// PromptParams builds the published prompt params. Every prompt has mode, message, phase,
// policy_name (codex_app_server), vendor (Codex), content_preview (≤ PreviewLimit
// characters), codex_method, codex_request_id and allow_remember (whether "approve and
// remember" means something to Codex for this method), plus the method's own extras
// copied from the request.
//
// mode is "form" for every method except an MCP elicitation, which keeps the MCP
// server's own mode: form prompts carry its requestedSchema, url prompts its url (the
// page the person must visit) — the approval UI shows the target host before the link.
func (r *Request) PromptParams() map[string]any {
	p := r.Params
	out := map[string]any{
		"mode":             "form",
		"policy_name":      PolicyName,
		"vendor":           Vendor,
		"codex_method":     r.Method,
		"codex_request_id": r.ID,
		"allow_remember":   false,
	}
	var message, preview string
	switch r.Method {
	case MethodCommandApproval, MethodExecCommand:
		out["phase"] = PhaseCommand
		out["allow_remember"] = true
		copyKeys(out, p, "cwd", "reason", "threadId", "turnId", "itemId", "approvalId", "commandActions",
			"networkApprovalContext", "proposedExecpolicyAmendment", "conversationId", "callId")
		cmd, _ := commandText(p["command"])
		host := ""
		if nc, ok := p["networkApprovalContext"].(map[string]any); ok {
			host = str(nc["host"])
		}
		switch {
		case cmd != "":
			out["command"] = cmd
			message = "Codex wants to run **" + hookkit.Clip(hookkit.OneLine(cmd), messageArgLimit) + "**"
			preview = cmd
		case host != "":
			message = "Codex wants network access to **" + hookkit.Clip(host, messageArgLimit) + "**"
			preview = host
		default:
			message = "Codex wants to run a command"
			preview = str(p["reason"])
		}
	case MethodFileChangeApproval:
		out["phase"] = PhaseFileChange
		out["allow_remember"] = true
		copyKeys(out, p, "reason", "grantRoot", "threadId", "turnId", "itemId")
		message = "Codex wants to change files"
		if root := str(p["grantRoot"]); root != "" {
			message += " under **" + hookkit.Clip(root, messageArgLimit) + "**"
		}
		preview = firstNonEmpty(str(p["reason"]), str(p["grantRoot"]), message)
	case MethodApplyPatch:
		out["phase"] = PhaseFileChange
		out["allow_remember"] = true
		copyKeys(out, p, "conversationId", "callId", "fileChanges", "reason", "grantRoot")
		paths := changedPaths(p["fileChanges"])
		message = fmt.Sprintf("Codex wants to change %d file%s", len(paths), plural(len(paths)))
		if len(paths) == 1 {
			message = "Codex wants to change **" + hookkit.Clip(paths[0], messageArgLimit) + "**"
		}
		preview = firstNonEmpty(strings.Join(paths, "\n"), str(p["reason"]), message)
	case MethodPermissions:
		out["phase"] = PhasePermissions
		out["allow_remember"] = true // a remembered grant lasts the session, not the turn
		copyKeys(out, p, "permissions", "reason", "cwd", "threadId", "turnId", "itemId")
		message = "Codex asks for more permissions"
		preview = compactJSON(p["permissions"])
	case MethodRequestUserInput:
		out["phase"] = PhaseUserInput
		copyKeys(out, p, "threadId", "turnId", "itemId")
		qs := questions(p["questions"])
		out["ask_user_question"] = map[string]any{"questions": qs}
		texts := make([]string, 0, len(qs))
		for _, q := range qs {
			texts = append(texts, firstNonEmpty(q["question"].(string), q["header"].(string), q["id"].(string)))
		}
		message = "Codex has a question"
		if len(qs) > 1 {
			message = fmt.Sprintf("Codex has %d questions", len(qs))
		}
		preview = strings.Join(texts, "\n")
	case MethodMCPElicitation:
		out["phase"] = PhaseMCP
		mode := r.mcpMode()
		out["mode"] = mode
		copyKeys(out, p, "threadId", "turnId", "elicitationId")
		out["server_name"] = str(p["serverName"])
		message = str(p["message"])
		if mode == "url" {
			out["url"] = str(p["url"])
			preview = str(p["url"])
		} else {
			schema, _ := p["requestedSchema"].(map[string]any)
			if schema == nil {
				schema = map[string]any{"type": "object", "properties": map[string]any{}}
			}
			out["requestedSchema"] = schema
			preview = message
		}
		if name := str(p["serverName"]); name != "" {
			preview = name + ": " + preview
		}
	}
	out["message"] = message
	out["content_preview"] = hookkit.Clip(preview, PreviewLimit)
	return out
}

// questions normalises requestUserInput questions to the shape the approval UI reads
// for Claude's AskUserQuestion (question, header, multiSelect, options[label,
// description]) plus Codex's own id, isOther and isSecret. Codex questions are single
// choice, so multiSelect is false.
func questions(v any) []map[string]any {
	list, _ := v.([]any)
	out := make([]map[string]any, 0, len(list))
	for _, q := range list {
		m, ok := q.(map[string]any)
		if !ok {
			continue
		}
		opts := []any{}
		if ol, ok := m["options"].([]any); ok {
			for _, o := range ol {
				if om, ok := o.(map[string]any); ok {
					opts = append(opts, map[string]any{"label": str(om["label"]), "description": str(om["description"])})
				}
			}
		}
		isOther, _ := m["isOther"].(bool)
		isSecret, _ := m["isSecret"].(bool)
		out = append(out, map[string]any{
			"id": str(m["id"]), "question": str(m["question"]), "header": str(m["header"]),
			"multiSelect": false, "options": opts, "isOther": isOther, "isSecret": isSecret,
		})
	}
	return out
}

// changedPaths lists the paths of a legacy fileChanges object, sorted.
func changedPaths(v any) []string {
	m, _ := v.(map[string]any)
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func copyKeys(dst, src map[string]any, keys ...string) {
	for _, k := range keys {
		if v, ok := src[k]; ok && v != nil {
			dst[k] = v
		}
	}
}

func compactJSON(v any) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return ""
	}
	return strings.TrimRight(buf.String(), "\n")
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if strings.TrimSpace(s) != "" {
			return s
		}
	}
	return ""
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
