package policy

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/google/cel-go/cel"
	"gopkg.in/yaml.v3"

	"github.com/gatehouse-dev/gatehouse/internal/risk"
)

// policyKeys are the keys a policy entry may have; anything else is a typo worth
// stopping the server for (a misspelt `when` would otherwise match every event).
var policyKeys = []string{"name", "on", "when", "action", "reason", "timeout", "on_timeout"}

// LoadFile reads the --policy-file. An empty path is an engine without policies. Any
// problem — unreadable file, bad YAML, unknown key, invalid CEL — is an error naming
// the file and line, so the server refuses to start rather than run without its rules.
func LoadFile(path string) (*Engine, error) {
	e := New()
	if path == "" {
		return e, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("policy file: %w", err)
	}
	if err := e.LoadYAML(path, data); err != nil {
		return nil, err
	}
	return e, nil
}

// LoadYAML compiles the policies of a YAML document (file names it in errors) and
// appends them to the engine, all or nothing.
func (e *Engine) LoadYAML(file string, data []byte) error {
	ps, rs, err := parseYAML(file, data)
	if err != nil {
		return err
	}
	if err := e.add(ps...); err != nil {
		return err
	}
	return e.addRisk(rs...)
}

// fileError is an error at a line of the policy file.
type fileError struct {
	file string
	line int
	msg  string
}

func (f *fileError) Error() string {
	if f.line > 0 {
		return fmt.Sprintf("policy file %s: line %d: %s", f.file, f.line, f.msg)
	}
	return fmt.Sprintf("policy file %s: %s", f.file, f.msg)
}

func parseYAML(file string, data []byte) ([]*policy, []risk.Rule, error) {
	errAt := func(line int, format string, a ...any) error {
		return &fileError{file: file, line: line, msg: fmt.Sprintf(format, a...)}
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		// yaml.v3 errors already say "yaml: line N: …".
		return nil, nil, &fileError{file: file, msg: err.Error()}
	}
	if len(doc.Content) == 0 {
		return nil, nil, nil // an empty file: no policies
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, nil, errAt(root.Line, "the file must be a mapping with a `policies:` list")
	}
	var list, riskList *yaml.Node
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		switch k.Value {
		case "policies":
			list = v
		case "risk":
			riskList = v
		default:
			return nil, nil, errAt(k.Line, "unknown top-level key %q (want policies or risk)", k.Value)
		}
	}
	rs, err := parseRisk(riskList, errAt)
	if err != nil {
		return nil, nil, err
	}
	if list == nil || (list.Kind == yaml.ScalarNode && list.Tag == "!!null") {
		return nil, rs, nil
	}
	if list.Kind != yaml.SequenceNode {
		return nil, nil, errAt(list.Line, "policies must be a list")
	}
	env, err := newEnv()
	if err != nil {
		return nil, nil, err
	}
	seen := map[string]int{}
	out := make([]*policy, 0, len(list.Content))
	for _, item := range list.Content {
		p, err := parseEntry(env, item, errAt)
		if err != nil {
			return nil, nil, err
		}
		if line, dup := seen[p.name]; dup {
			return nil, nil, errAt(item.Line, "policy %q is already defined at line %d", p.name, line)
		}
		seen[p.name] = item.Line
		out = append(out, p)
	}
	return out, rs, nil
}

type errAtFunc func(line int, format string, a ...any) error

func parseEntry(env *cel.Env, item *yaml.Node, errAt errAtFunc) (*policy, error) {
	if item.Kind != yaml.MappingNode {
		return nil, errAt(item.Line, "each policy must be a mapping with name, on, when, action, reason")
	}
	fields := map[string]*yaml.Node{}
	keyLines := map[string]int{}
	for i := 0; i+1 < len(item.Content); i += 2 {
		k, v := item.Content[i], item.Content[i+1]
		if !contains(policyKeys, k.Value) {
			return nil, errAt(k.Line, "unknown key %q (want %s)", k.Value, strings.Join(policyKeys, ", "))
		}
		if _, dup := fields[k.Value]; dup {
			return nil, errAt(k.Line, "key %q appears twice", k.Value)
		}
		fields[k.Value] = v
		keyLines[k.Value] = k.Line
	}
	nameNode := fields["name"]
	if nameNode == nil || nameNode.Kind != yaml.ScalarNode || strings.TrimSpace(nameNode.Value) == "" {
		return nil, errAt(item.Line, "a policy needs a non-empty name")
	}
	name := strings.TrimSpace(nameNode.Value)
	inPolicy := func(line int, format string, a ...any) error {
		return errAt(line, "policy '%s': %s", name, fmt.Sprintf(format, a...))
	}

	actNode := fields["action"]
	if actNode == nil || actNode.Kind != yaml.ScalarNode {
		return nil, inPolicy(item.Line, "action is required (ALLOW, DENY or ASK)")
	}
	action := Action(strings.ToUpper(strings.TrimSpace(actNode.Value)))
	switch action {
	case Allow, Deny, Ask:
	default:
		return nil, inPolicy(actNode.Line, "action must be ALLOW, DENY or ASK, not %q", actNode.Value)
	}

	reason := ""
	if n := fields["reason"]; n != nil {
		if n.Kind != yaml.ScalarNode {
			return nil, inPolicy(n.Line, "reason must be text")
		}
		reason = strings.TrimSpace(n.Value)
	}

	// An ASK may set its own wait and the answer when it runs out.
	var timeout time.Duration
	if n := fields["timeout"]; n != nil {
		if action != Ask {
			return nil, inPolicy(n.Line, "timeout applies to ASK policies only")
		}
		d, err := time.ParseDuration(strings.TrimSpace(n.Value))
		if n.Kind != yaml.ScalarNode || err != nil || d < time.Second {
			return nil, inPolicy(n.Line, "timeout must be a duration of at least 1s, such as 30s or 5m")
		}
		timeout = d
	}
	onTimeout := ""
	if n := fields["on_timeout"]; n != nil {
		if action != Ask {
			return nil, inPolicy(n.Line, "on_timeout applies to ASK policies only")
		}
		onTimeout = strings.ToLower(strings.TrimSpace(n.Value))
		if n.Kind != yaml.ScalarNode || (onTimeout != "none" && onTimeout != "deny" && onTimeout != "allow") {
			return nil, inPolicy(n.Line, "on_timeout must be none, deny or allow")
		}
	}

	var on []string
	if n := fields["on"]; n != nil {
		switch n.Kind {
		case yaml.ScalarNode:
			if n.Tag != "!!null" {
				on = []string{n.Value}
			}
		case yaml.SequenceNode:
			for _, c := range n.Content {
				if c.Kind != yaml.ScalarNode {
					return nil, inPolicy(c.Line, "on must list phases like tool_call or tool_call:Bash")
				}
				on = append(on, c.Value)
			}
		default:
			return nil, inPolicy(n.Line, "on must list phases like tool_call or tool_call:Bash")
		}
	}
	triggers, err := parseTriggers(on)
	if err != nil {
		return nil, inPolicy(keyLines["on"], "%s", err.Error())
	}

	var cond *condition
	if n := fields["when"]; n != nil {
		if n.Kind != yaml.ScalarNode {
			return nil, inPolicy(n.Line, "when must be a CEL expression (a string)")
		}
		if strings.TrimSpace(n.Value) != "" && n.Tag != "!!null" {
			if cond, err = compile(env, n); err != nil {
				var ce *celError
				if errors.As(err, &ce) {
					return nil, inPolicy(ce.line, "when: %s", ce.msg)
				}
				return nil, inPolicy(n.Line, "when: %v", err)
			}
		}
	}
	d := Decision{Action: action, Reason: reason, Timeout: timeout, OnTimeout: onTimeout}
	return &policy{name: name, triggers: triggers, eval: func(ctx context.Context, _ Event, vars func() map[string]any) (Decision, error) {
		if cond == nil {
			return d, nil
		}
		match, err := evalBool(ctx, cond, vars())
		if err != nil || !match {
			return Decision{}, err
		}
		return d, nil
	}}, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
