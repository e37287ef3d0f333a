package park

import (
	"github.com/gatehouse-dev/gatehouse/internal/prompt"
	"github.com/gatehouse-dev/gatehouse/internal/risk"
)

// rate stores the tool call's risk with the prompt (params "risk") before the rules
// run, so a prompt decided by a rule records it too, and every view and the API read
// the same rating.
func rate(j *Job) {
	if j.Subject == nil {
		return
	}
	kind := j.Subject.Kind
	if kind == "" {
		kind = prompt.KindOfName(j.Subject.Tool)
	}
	a := risk.Assess(risk.Call{Kind: kind, Input: j.Subject.Input, Cwd: j.Subject.Cwd})
	params := make(map[string]any, len(j.Prompt.Params)+1)
	for k, v := range j.Prompt.Params {
		params[k] = v
	}
	params[risk.ParamKey] = a
	j.Prompt.Params = params
}
