package shell

import (
	"reflect"
	"testing"
)

// TestJoinReadsBackAsTheArgv: a joined argv parses back into exactly that one command.
func TestJoinReadsBackAsTheArgv(t *testing.T) {
	for _, argv := range [][]string{
		{"go", "test", "./..."},
		{"bash", "-lc", "git status; rm -rf ~"},
		{"sh", "-c", "rm -rf ~"},
		{"echo", "$(id)", "`id`", "$HOME", "a b", "", "it's", "*", "~", "x=1"},
		{"printf", "%s\n", "line\tbreak"},
	} {
		line, ok := Join(argv)
		if !ok {
			t.Fatalf("Join(%q) failed", argv)
		}
		l := Parse(line, "/repo")
		var got []string
		for _, c := range append(append([]Command{}, l.Wrappers...), l.Commands...) {
			if reflect.DeepEqual(c.Args, argv) {
				got = c.Args
			}
		}
		if got == nil {
			t.Errorf("Join(%q) = %q, which parses as %+v", argv, line, l)
		}
	}
	if _, ok := Join([]string{"echo", "a\x00b"}); ok {
		t.Error("a NUL byte was joined")
	}
}
