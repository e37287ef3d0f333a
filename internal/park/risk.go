package park

import (
	"github.com/gatehouse-dev/gatehouse/internal/prompt"
	"github.com/gatehouse-dev/gatehouse/internal/risk"
	"github.com/gatehouse-dev/gatehouse/models"
)

// rate stores the tool call's risk with the prompt (params "risk") before the rules
// run, so a prompt decided by a rule records it too, and every view and the API read
// the same rating.
func (s *Service) rate(j *Job) {
	if j.Subject == nil {
		return
	}
	kind := j.Subject.Kind
	if kind == "" {
		kind = prompt.KindOfName(j.Subject.Tool)
	}
	a := s.risk.Assess(risk.Call{Tool: j.Subject.Tool, Kind: kind, Input: j.Subject.Input, Cwd: j.Subject.Cwd})
	j.Prompt.Params = withRisk(j.Prompt.Params, a)
	j.Subject.Critical = a.Level == risk.Critical
}

// rateCall is rate for a call of the MCP proxy, rated by its name, arguments and what
// its server says of it; it reports whether the call is critical (no allow rule
// answers it).
func (s *Service) rateCall(c *Call) (critical bool) {
	kind := prompt.KindOfName(c.Tool)
	if _, ok := c.Args["command"].(string); ok && kind == models.KindOther {
		kind = models.KindShell
	}
	a := s.risk.Assess(risk.Call{Tool: c.Tool, Kind: kind, Input: c.Args, Hints: c.Hints})
	c.Prompt.Params = withRisk(c.Prompt.Params, a)
	return a.Level == risk.Critical
}

// withRisk is a copy of params with the assessment under risk.ParamKey (the caller's
// map may be shared).
func withRisk(params map[string]any, a risk.Assessment) map[string]any {
	out := make(map[string]any, len(params)+1)
	for k, v := range params {
		out[k] = v
	}
	out[risk.ParamKey] = a
	return out
}
