package policy

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/cel-go/cel"
)

// TestCELDeadlineStopsALongLoop: a loop that gets past the load-time estimate (here
// compiled without it) on input larger than the estimate assumed stops at EvalTimeout
// with errTooSlow instead of running for minutes.
func TestCELDeadlineStopsALongLoop(t *testing.T) {
	env, err := newEnv()
	if err != nil {
		t.Fatal(err)
	}
	ast, iss := env.Compile(`data.items.all(a, data.items.all(b, a == b))`)
	if iss.Err() != nil {
		t.Fatal(iss.Err())
	}
	prg, err := env.Program(ast, cel.InterruptCheckFrequency(interruptEvery))
	if err != nil {
		t.Fatal(err)
	}
	c := &condition{prg: prg, loops: hasLoop(ast)}
	if !c.loops {
		t.Fatal("hasLoop missed the comprehension")
	}
	items := make([]any, 100_000) // 1e10 comparisons: minutes without the deadline
	for i := range items {
		items[i] = "same"
	}
	start := time.Now()
	_, err = evalBool(context.Background(), c, Event{Data: map[string]any{"items": items}}.Vars())
	if !errors.Is(err, errTooSlow) {
		t.Fatalf("err = %v, want errTooSlow", err)
	}
	if d := time.Since(start); d > 4*EvalTimeout {
		t.Fatalf("stopped only after %s", d)
	}
}
