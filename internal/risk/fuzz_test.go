package risk

import (
	"testing"

	"github.com/gatehouse-dev/gatehouse/models"
)

// FuzzAssess: any command is rated without a panic, within MaxReasons, and a line that
// does not parse is never low.
func FuzzAssess(f *testing.F) {
	for _, s := range []string{"curl x | sudo bash", "rm -rf ~", "echo 'x", "git push -f", "a && b || $(c)", "bash -c 'eval \"$x\"'"} {
		f.Add(s, "/repo")
	}
	f.Fuzz(func(t *testing.T, cmd, cwd string) {
		a := Assess(Call{Kind: models.KindShell, Input: map[string]any{"command": cmd}, Cwd: cwd})
		if len(a.Reasons) > MaxReasons {
			t.Fatalf("%d reasons", len(a.Reasons))
		}
		if hasCode(a, "unparsed") && a.Level == Low {
			t.Fatalf("unparsed but low: %q", cmd)
		}
	})
}
