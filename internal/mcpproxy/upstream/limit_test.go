package upstream

import (
	"encoding/json"
	"errors"
	"syscall"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/errs"
)

// TestProcessesPerPersonCap: with MaxProcessesPerPerson 2, a person whose calls run two
// stdio server processes (real server-everything) is refused a third — a call or a
// listing in another session — with errs.ErrTooManyRequests naming the cap, while calls
// in the sessions already running go on and another person still starts one. A process
// that exits, and a session that ends, give the slot back.
func TestProcessesPerPersonCap(t *testing.T) {
	p := newPool(t, Options{MaxProcessesPerPerson: 2}, everything(t))
	ctx := t.Context()
	echo := json.RawMessage(`{"message":"x"}`)
	call := func(sid, person string) error {
		_, err := p.Call(ctx, sid, person, "everything__echo", echo)
		return err
	}
	refused := func(what string, err error) {
		t.Helper()
		const want = "too many MCP server processes: 2 of yours are running here (at most 2 per person); " +
			"end an MCP session you no longer use (DELETE its /mcp endpoint) or wait for an idle one to stop"
		if !errors.Is(err, errs.ErrTooManyRequests) || err.Error() != want {
			t.Fatalf("%s = %v, want the cap's refusal", what, err)
		}
	}
	for _, sid := range []string{"s1", "s2"} {
		if err := call(sid, "alice"); err != nil {
			t.Fatal(err)
		}
	}
	refused("a third session's call", call("s3", "alice"))
	_, err := p.Tools(ctx, "s3", "alice")
	refused("a third session's listing", err)
	if err := call("s1", "alice"); err != nil { // its process is already running
		t.Fatalf("a call in a running session: %v", err)
	}
	if err := call("s3", "bob"); err != nil {
		t.Fatalf("another person: %v", err)
	}

	// A process that exits gives its slot back.
	s2 := live(t, p, "s2", "everything")
	if err := s2.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case <-s2.exited:
	case <-time.After(10 * time.Second):
		t.Fatal("the killed server's connection never closed")
	}
	if err := call("s4", "alice"); err != nil {
		t.Fatalf("after a process exited: %v", err)
	}
	refused("at the cap again", call("s5", "alice"))

	// So does a session that ends (EndSession returns once its processes are waited).
	p.EndSession("s1")
	if err := call("s5", "alice"); err != nil {
		t.Fatalf("after a session ended: %v", err)
	}
	refused("at the cap once more", call("s6", "alice"))
}
