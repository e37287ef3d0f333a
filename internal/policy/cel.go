package policy

import (
	"fmt"
	"strings"

	"github.com/google/cel-go/cel"
	"gopkg.in/yaml.v3"
)

// newEnv declares the V0 event's fields as CEL variables. `type` and `target` are
// strings; the rest are maps of dynamic values (they hold whatever JSON the agent
// sent), so `data.arguments.command.startsWith("rm ")` type-checks.
func newEnv() (*cel.Env, error) {
	dynMap := cel.MapType(cel.StringType, cel.DynType)
	env, err := cel.NewEnv(
		cel.Variable("type", cel.StringType),
		cel.Variable("target", cel.StringType),
		cel.Variable("data", dynMap),
		cel.Variable("context", dynMap),
		cel.Variable("session", dynMap),
		cel.Variable("event", dynMap),
	)
	if err != nil {
		return nil, fmt.Errorf("policy: build CEL environment: %w", err)
	}
	return env, nil
}

// celError is a compile error placed at a line of the policy file.
type celError struct {
	line int
	msg  string
}

func (e *celError) Error() string { return e.msg }

// compile checks and plans a `when` expression. Errors carry the file line of the
// offending part of the expression (block scalars start on the line after the key).
func compile(env *cel.Env, n *yaml.Node) (cel.Program, error) {
	ast, iss := env.Compile(n.Value)
	if iss != nil && iss.Err() != nil {
		base := n.Line
		if n.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0 {
			base++
		}
		line, msgs := base, make([]string, 0, len(iss.Errors()))
		for i, e := range iss.Errors() {
			if i == 0 && e.Location != nil && e.Location.Line() > 1 && n.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0 {
				line = base + e.Location.Line() - 1
			}
			msg := e.Message
			if e.Location != nil && e.Location.Line() > 0 {
				msg = fmt.Sprintf("%s (at expression line %d, column %d)", msg, e.Location.Line(), e.Location.Column()+1)
			}
			msgs = append(msgs, msg)
		}
		return nil, &celError{line: line, msg: strings.Join(msgs, "; ")}
	}
	if t := ast.OutputType(); !t.IsExactType(cel.BoolType) && !t.IsExactType(cel.DynType) {
		return nil, &celError{line: n.Line, msg: fmt.Sprintf("must be a boolean expression, but it gives %s", t)}
	}
	prg, err := env.Program(ast)
	if err != nil {
		return nil, &celError{line: n.Line, msg: err.Error()}
	}
	return prg, nil
}

// evalBool runs a compiled condition against an event. A non-boolean answer (a dyn
// expression such as `data.name`) is an evaluation error, like a missing key.
func evalBool(prg cel.Program, vars map[string]any) (bool, error) {
	out, _, err := prg.Eval(vars)
	if err != nil {
		return false, err
	}
	b, ok := out.Value().(bool)
	if !ok {
		return false, fmt.Errorf("condition gave %v (%s), not true or false", out.Value(), out.Type().TypeName())
	}
	return b, nil
}
