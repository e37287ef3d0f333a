package policy

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/checker"
	celast "github.com/google/cel-go/common/ast"
	"gopkg.in/yaml.v3"
)

// The cost bounds of a `when` expression. A policy decides in the hot path of every
// tool call and its input is written by the agent, so a condition must stay cheap however
// hostile the input.
//
// CEL counts abstract cost units (roughly one per operation and per element or
// character touched). The bound is checked when the file loads, on the checker's
// worst-case estimate, not at run time with cel.CostLimit: cel-go's runtime cost tracker
// (v0.31) is quadratic in the iterations of a loop — with it, `exists` over 20,000
// strings takes 0.8 s instead of 3 ms — so it would itself pin the CPU it is meant to
// protect. At run time a condition with a loop runs under a deadline instead, checked
// every few iterations, and stops when its caller leaves; conditions without a loop are
// linear in the input, which the body limit bounds.
const (
	// CostLimit bounds the estimated worst-case cost of a condition. Kubernetes uses the
	// same per-expression bound for its CEL rules.
	CostLimit = 1_000_000
	// assumedInputSize is the size — in elements, entries or characters — the load-time
	// estimate assumes for every list, map and string the agent sends. A condition whose
	// worst case on such input exceeds CostLimit (typically a loop nested in a loop over
	// the agent's input) is refused when the policy file loads.
	assumedInputSize = 64 * 1024
	// EvalTimeout bounds one run of a condition with a loop, for input beyond what the
	// estimate assumed. A condition that runs out of time counts as a failure: DENY.
	EvalTimeout = time.Second
	// interruptEvery is how many loop iterations run between checks of the deadline and
	// of the caller's context.
	interruptEvery = 100
)

// errTooSlow is the cause of a condition's deadline.
var errTooSlow = fmt.Errorf("evaluation took longer than %s (the input is too large for this condition)", EvalTimeout)

// condition is a compiled `when` expression.
type condition struct {
	prg cel.Program
	// loops is true when the expression iterates (a macro such as exists or all): only
	// those can run long, so only those pay for a deadline.
	loops bool
}

// inputSizes tells the cost estimator how big the event's values can be: the checker
// knows nothing about dyn values and would otherwise assume the largest size there is.
type inputSizes struct{}

func (inputSizes) EstimateSize(checker.AstNode) *checker.SizeEstimate {
	return &checker.SizeEstimate{Min: 0, Max: assumedInputSize}
}

func (inputSizes) EstimateCallCost(string, string, *checker.AstNode, []checker.AstNode) *checker.CallEstimate {
	return nil // the standard cost of every function
}

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
		cel.Variable("risk", dynMap),
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
// An expression whose worst-case cost exceeds CostLimit is refused here.
func compile(env *cel.Env, n *yaml.Node) (*condition, error) {
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
	est, err := env.EstimateCost(ast, inputSizes{})
	if err != nil {
		return nil, &celError{line: n.Line, msg: "cannot estimate its cost: " + err.Error()}
	}
	if est.Max > CostLimit {
		return nil, &celError{line: n.Line, msg: fmt.Sprintf("is too expensive: on agent input of %d elements its cost "+
			"could reach %d, over the limit of %d (avoid loops nested in loops over the agent's input)",
			assumedInputSize, est.Max, CostLimit)}
	}
	prg, err := env.Program(ast, cel.InterruptCheckFrequency(interruptEvery))
	if err != nil {
		return nil, &celError{line: n.Line, msg: err.Error()}
	}
	return &condition{prg: prg, loops: hasLoop(ast)}, nil
}

// hasLoop reports whether a checked expression contains a comprehension.
func hasLoop(a *cel.Ast) bool {
	found := false
	celast.PostOrderVisit(a.NativeRep().Expr(), celast.NewExprVisitor(func(e celast.Expr) {
		found = found || e.Kind() == celast.ComprehensionKind
	}))
	return found
}

// evalBool runs a compiled condition against an event. A non-boolean answer (a dyn
// expression such as `data.name`) is an evaluation error, like a missing key. So is a
// loop that runs out of time or whose caller left (ctx done): the engine fails closed,
// and the error says which happened.
func evalBool(ctx context.Context, c *condition, vars map[string]any) (bool, error) {
	if c.loops {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, EvalTimeout, errTooSlow)
		defer cancel()
	}
	out, _, err := c.prg.ContextEval(ctx, vars)
	if err != nil {
		if ctx.Err() != nil {
			if cause := context.Cause(ctx); errors.Is(cause, errTooSlow) {
				return false, cause
			}
			return false, fmt.Errorf("evaluation stopped: the caller left (%w)", context.Cause(ctx))
		}
		return false, err
	}
	b, ok := out.Value().(bool)
	if !ok {
		return false, fmt.Errorf("condition gave %v (%s), not true or false", out.Value(), out.Type().TypeName())
	}
	return b, nil
}
