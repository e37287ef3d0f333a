// Package policy is Gatehouse's policy engine: an ordered list of policies, each
// watching some phases of an agent's work (tool calls, LLM requests, …) and answering
// ALLOW, DENY or ASK for an event. Policies come from a YAML file (CEL conditions) or
// are registered in Go. Evaluation is pure: no HTTP, no database, no clock.
//
// Composition (§7): the first DENY wins at once with its own reason; every ASK adds
// "<name>: <reason>" to the answer; otherwise the answer is ALLOW. A policy that cannot
// be evaluated counts as a DENY — the engine fails closed.
package policy

import (
	"context"
	"fmt"
	"github.com/gatehouse-dev/gatehouse/internal/prompt"
	"github.com/gatehouse-dev/gatehouse/internal/risk"
	"github.com/gatehouse-dev/gatehouse/models"
	"strings"
	"sync"
	"time"
)

// Action is a policy's answer.
type Action string

// The three answers a policy can give.
const (
	Allow Action = "ALLOW"
	Deny  Action = "DENY"
	Ask   Action = "ASK"
)

// Phases of an agent's work a policy can watch, as the V0 event's lower-case type.
const (
	PhaseToolCall    = "tool_call"
	PhaseToolResult  = "tool_result"
	PhaseLLMRequest  = "llm_request"
	PhaseLLMResponse = "llm_response"
	PhaseRequest     = "request"
	// PhasePermissionDenied is an agent's own check refusing a tool call (Claude Code's
	// auto mode), about to be escalated to a person (--escalate-denials): a DENY lets
	// the refusal stand, anything else escalates it. Agents never post it to
	// /policies/evaluate, so it is a phase of policy files only.
	PhasePermissionDenied = "permission_denied"
)

// Phases lists every phase, in the order the API documents them.
func Phases() []string {
	return []string{PhaseToolCall, PhaseToolResult, PhaseLLMRequest, PhaseLLMResponse, PhaseRequest}
}

// ValidPhase reports whether p is a known lower-case phase.
func ValidPhase(p string) bool {
	for _, q := range Phases() {
		if p == q {
			return true
		}
	}
	return false
}

// DefaultAskReason is what an ASK without a reason contributes after its name.
const DefaultAskReason = "approval required"

// SessionInfo places the event in the session tree.
type SessionInfo struct {
	ID     string
	Depth  int
	RootID string
}

// Event is the V0 policy event: what an expression sees.
type Event struct {
	// Type is the lower-case phase, e.g. "tool_call".
	Type string
	// Target is what the event is about; for tool phases the tool name.
	Target  string
	Data    map[string]any
	Context map[string]any
	Session SessionInfo
	// Hints are the MCP tool's annotations when its server listed them (risk).
	Hints *risk.Hints
}

// Tool is the tool an event is about: data.name for tool phases, else the target.
func (e Event) Tool() string {
	if name, ok := e.Data["name"].(string); ok && name != "" {
		return name
	}
	return e.Target
}

// Vars is the event as CEL variables: type, target, data, context and session, plus
// the whole event as "event" for expressions that prefer event.data.name.
func (e Event) Vars() map[string]any { return e.vars(nil) }

// vars is Vars with the risk rated by t.
func (e Event) vars(t *risk.Table) map[string]any {
	data := e.Data
	if data == nil {
		data = map[string]any{}
	}
	ctx := e.Context
	if ctx == nil {
		ctx = map[string]any{}
	}
	ev := map[string]any{
		"type": e.Type, "target": e.Target, "data": data, "context": ctx,
		"session": map[string]any{"id": e.Session.ID, "depth": int64(e.Session.Depth), "root_id": e.Session.RootID},
	}
	vars := make(map[string]any, len(ev)+1)
	for k, v := range ev {
		vars[k] = v
	}
	vars["event"] = ev
	vars["risk"] = e.risk(t)
	return vars
}

// risk rates the event's tool call (internal/risk) for `risk.level` and
// `risk.reasons` in expressions: `risk.level in ["high", "critical"]`.
func (e Event) risk(t *risk.Table) map[string]any {
	args, _ := e.Data["arguments"].(map[string]any)
	kind := prompt.KindOfName(e.Tool())
	if _, ok := args["command"].(string); ok && kind == models.KindOther {
		kind = models.KindShell
	}
	cwd, _ := e.Context["cwd"].(string)
	a := t.Assess(risk.Call{Tool: e.Tool(), Kind: kind, Input: args, Cwd: cwd, Hints: e.Hints})
	reasons := make([]any, 0, len(a.Reasons))
	for _, r := range a.Reasons {
		reasons = append(reasons, map[string]any{"code": r.Code, "text": r.Text, "match": r.Match})
	}
	return map[string]any{"level": string(a.Level), "reasons": reasons}
}

// Decision is one policy's answer to one event. An empty Action means ALLOW.
type Decision struct {
	Action Action
	Reason string
	// Timeout and OnTimeout are an ASK's own wait and the answer when it runs out
	// ("none", "deny", "allow"; "" is none); zero: the server's default wait.
	Timeout   time.Duration
	OnTimeout string
}

// Func is a policy written in Go (for embedding and tests). A panic counts as a
// failure to evaluate, which is a DENY.
type Func func(Event) Decision

// Result is the composed answer of every policy.
type Result struct {
	Action Action
	// Reason is the DENY's reason, or the ASK contributions joined with "; ".
	Reason string
	// Policy names the deciding policy: the DENY, or the first ASK. Empty for ALLOW.
	Policy string
	// Timeout and OnTimeout are the first ASK's own wait and timeout answer, if set.
	Timeout   time.Duration
	OnTimeout string
}

// trigger is one entry of a policy's `on` list: a phase, optionally narrowed to a tool.
type trigger struct {
	phase string
	tool  string
}

// policy is one compiled policy.
type policy struct {
	name     string
	triggers []trigger // empty: every phase
	// eval answers for one event; vars gives the event as CEL variables, built at
	// most once per evaluation.
	eval func(ctx context.Context, ev Event, vars func() map[string]any) (Decision, error)
}

func (p *policy) watches(ev Event) bool {
	if len(p.triggers) == 0 {
		return true
	}
	for _, t := range p.triggers {
		if t.phase == ev.Type && (t.tool == "" || t.tool == ev.Tool()) {
			return true
		}
	}
	return false
}

// Engine is an ordered set of policies. It is safe for concurrent use; policies
// registered later run after the ones already there.
type Engine struct {
	mu       sync.RWMutex
	policies []*policy
	// risk rates tool calls: the built-in table and the policy file's `risk:` rules.
	risk *risk.Table
	// riskRules are those rules, kept to rebuild risk when more are loaded.
	riskRules []risk.Rule
}

// New returns an engine with no policies: every event is allowed.
func New() *Engine { return &Engine{} }

// Len reports how many policies the engine holds.
func (e *Engine) Len() int {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return len(e.policies)
}

// Register adds a Go policy under name, watching the phases in on (same syntax as the
// YAML file: "tool_call", "tool_call:Bash"; none means every phase). It fails when the
// name is taken or a trigger is malformed.
func (e *Engine) Register(name string, on []string, fn Func) error {
	if strings.TrimSpace(name) == "" {
		return fmt.Errorf("policy name is required")
	}
	if fn == nil {
		return fmt.Errorf("policy %q: function is nil", name)
	}
	triggers, err := parseTriggers(on)
	if err != nil {
		return fmt.Errorf("policy %q: %w", name, err)
	}
	p := &policy{name: name, triggers: triggers, eval: func(_ context.Context, ev Event, _ func() map[string]any) (d Decision, err error) {
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("panic: %v", r)
			}
		}()
		d = fn(ev)
		switch d.Action {
		case "", Allow, Deny, Ask:
			return d, nil
		}
		return d, fmt.Errorf("returned unknown action %q", d.Action)
	}}
	return e.add(p)
}

func (e *Engine) add(ps ...*policy) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, p := range ps {
		for _, q := range e.policies {
			if q.name == p.name {
				return fmt.Errorf("policy %q is defined twice", p.name)
			}
		}
		e.policies = append(e.policies, p)
	}
	return nil
}

// addRisk adds rules to the risk table, all or nothing.
func (e *Engine) addRisk(rs ...risk.Rule) error {
	if len(rs) == 0 {
		return nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	all := append(append([]risk.Rule(nil), e.riskRules...), rs...)
	t, err := risk.NewTable(all...)
	if err != nil {
		return err
	}
	e.risk, e.riskRules = t, all
	return nil
}

// Risk is the table tool calls are rated by: the built-in one extended by the policy
// file's `risk:` rules. Every request that parks is rated by it (internal/park), so
// the level a policy's `risk.level` sees is the level the person sees.
func (e *Engine) Risk() *risk.Table {
	if e == nil {
		return nil
	}
	e.mu.RLock()
	defer e.mu.RUnlock()
	return e.risk
}

// Evaluate is EvaluateContext for callers without a request to follow.
func (e *Engine) Evaluate(ev Event) Result {
	return e.EvaluateContext(context.Background(), ev)
}

// EvaluateContext composes every watching policy's answer to ev, in order. When ctx
// ends (the caller hung up) a running CEL condition stops within a few iterations and
// the answer is a DENY saying so, so a departed caller does not keep a CPU busy.
func (e *Engine) EvaluateContext(ctx context.Context, ev Event) Result {
	e.mu.RLock()
	ps, table := e.policies, e.risk
	e.mu.RUnlock()
	var asks []string
	first := ""
	var wait time.Duration
	onTimeout := ""
	var cached map[string]any
	vars := func() map[string]any {
		if cached == nil {
			cached = ev.vars(table)
		}
		return cached
	}
	for _, p := range ps {
		if !p.watches(ev) {
			continue
		}
		d, err := p.eval(ctx, ev, vars)
		if err != nil {
			return Result{Action: Deny, Reason: fmt.Sprintf("policy '%s' failed: %v", p.name, err), Policy: p.name}
		}
		switch d.Action {
		case Deny:
			return Result{Action: Deny, Reason: d.Reason, Policy: p.name}
		case Ask:
			reason := d.Reason
			if strings.TrimSpace(reason) == "" {
				reason = DefaultAskReason
			}
			asks = append(asks, p.name+": "+reason)
			if first == "" {
				first, wait, onTimeout = p.name, d.Timeout, d.OnTimeout
			}
		}
	}
	if len(asks) > 0 {
		return Result{Action: Ask, Reason: strings.Join(asks, "; "), Policy: first, Timeout: wait, OnTimeout: onTimeout}
	}
	return Result{Action: Allow}
}

// parseTriggers reads an `on` list.
func parseTriggers(on []string) ([]trigger, error) {
	out := make([]trigger, 0, len(on))
	for _, raw := range on {
		t, err := parseTrigger(raw)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

func parseTrigger(raw string) (trigger, error) {
	phase, tool, narrowed := strings.Cut(strings.TrimSpace(raw), ":")
	phase = strings.ToLower(strings.TrimSpace(phase))
	phase = strings.TrimPrefix(phase, "phase_")
	tool = strings.TrimSpace(tool)
	if !ValidPhase(phase) && phase != PhasePermissionDenied {
		return trigger{}, fmt.Errorf("unknown phase %q in on (want one of %s, optionally narrowed like tool_call:Bash)",
			raw, strings.Join(append(Phases(), PhasePermissionDenied), ", "))
	}
	if narrowed {
		if tool == "" {
			return trigger{}, fmt.Errorf("%q names no tool after the colon", raw)
		}
		if phase != PhaseToolCall && phase != PhaseToolResult && phase != PhasePermissionDenied {
			return trigger{}, fmt.Errorf("%q: only tool_call, tool_result and permission_denied can be narrowed to a tool", raw)
		}
	}
	return trigger{phase: phase, tool: tool}, nil
}
