package policy

import (
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/gatehouse-dev/gatehouse/internal/risk"
)

// riskKeys are the keys a `risk:` entry may have.
var riskKeys = []string{"name", "level", "reason", "command", "path", "tool"}

// parseRisk reads the policy file's `risk:` list: rules that extend the built-in risk
// table (internal/risk), each refused with its line when it could not mean what it
// says.
//
//	risk:
//	  - name: publish
//	    command: npm publish      # the words a shell command starts with
//	    level: high
//	    reason: publishes a package
func parseRisk(list *yaml.Node, errAt errAtFunc) ([]risk.Rule, error) {
	if list == nil || (list.Kind == yaml.ScalarNode && list.Tag == "!!null") {
		return nil, nil
	}
	if list.Kind != yaml.SequenceNode {
		return nil, errAt(list.Line, "risk must be a list")
	}
	var out []risk.Rule
	seen := map[string]int{}
	for _, item := range list.Content {
		if item.Kind != yaml.MappingNode {
			return nil, errAt(item.Line, "each risk rule must be a mapping with name, level, reason and one of command, path or tool")
		}
		var r risk.Rule
		for i := 0; i+1 < len(item.Content); i += 2 {
			k, v := item.Content[i], item.Content[i+1]
			if !contains(riskKeys, k.Value) {
				return nil, errAt(k.Line, "unknown key %q in a risk rule (want %s)", k.Value, strings.Join(riskKeys, ", "))
			}
			if v.Kind != yaml.ScalarNode {
				return nil, errAt(v.Line, "risk rule key %q must be a string", k.Value)
			}
			val := strings.TrimSpace(v.Value)
			switch k.Value {
			case "name":
				r.Name = val
			case "level":
				r.Level = risk.Level(strings.ToLower(val))
			case "reason":
				r.Reason = val
			case "command":
				r.Command = strings.Fields(val)
			case "path":
				r.Path = val
			case "tool":
				r.Tool = val
			}
		}
		if err := r.Check(); err != nil {
			return nil, errAt(item.Line, "%v", err)
		}
		if line, dup := seen[r.Name]; dup {
			return nil, errAt(item.Line, "risk rule %q is already defined at line %d", r.Name, line)
		}
		seen[r.Name] = item.Line
		out = append(out, r)
	}
	return out, nil
}
