package shell

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// parseBudget bounds one Parse of fuzzed input (generous: the machine may be loaded).
const parseBudget = 5 * time.Second

// FuzzParse: any input parses without a panic, in bounded time, deterministically,
// into commands whose text is well formed; and when nothing is unseen each command's
// text reads back as that same one command.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"git status; rm -rf ~", "a && b || c | d", "(a; { b; }) &", "echo $(id) `id` <(id) $((1))",
		"bash -c 'eval \"rm -rf ~\"'", "cat <<EOF\n$(id)\nEOF", "FOO=1 npm test > out 2>&1",
		"[[ -f x && $a -eq 1 ]]", "declare -i x; let x=1", "echo {a,b}{1..3} ~/x *.go",
		"f() { g; }; trap 'x' EXIT", "echo $'\\x41\\n' \"a\\\"b\"", "zsh -c 'ls *(e:x:)'",
		"case $x in a) b;; esac", "for ((;;)); do :; done", "echo 'unterminated",
	} {
		f.Add(s, project)
	}
	f.Fuzz(func(t *testing.T, src, dir string) {
		done := make(chan *Line, 1)
		go func() { done <- Parse(src, dir) }()
		var l *Line
		select {
		case l = <-done:
		case <-time.After(parseBudget):
			t.Fatalf("Parse took more than %v", parseBudget)
		}
		if l.Source != src {
			t.Fatal("Source changed")
		}
		if again := Parse(src, dir); !reflect.DeepEqual(l, again) {
			t.Fatalf("Parse is not deterministic: %#v vs %#v", l, again)
		}
		for _, c := range slices.Concat(l.Commands, l.Wrappers) {
			if c.Text == "" || len(c.Args)+len(c.Assigns) == 0 || c.Text != strings.Join(c.words, " ") {
				t.Fatalf("malformed command %#v", c)
			}
		}
		if len(l.Unseen) != 0 {
			return
		}
		for _, c := range l.Commands {
			back := parse(c.Text, project, false)
			if len(back.Commands) != 1 || back.Commands[0].Text != c.Text || len(back.Unseen) != 0 {
				t.Fatalf("text %q of a command of %q reads back as %q (unseen %q)", c.Text, src, texts(back.Commands), back.Unseen)
			}
		}
	})
}

// victim is the command a fuzzed pattern must never let through.
const victim = "rm -rf /tmp/victim"

// absorbs reports whether cmd legitimately swallows what sep and the victim add, so
// that the victim is not a command of its own: a comment (to the end of its line), a
// here-document (whose body starts on the next line), or a trailing backslash escaping
// the separator.
func absorbs(cmd, sep string) bool {
	cmd = strings.ReplaceAll(cmd, "\x00", "") // dropped, as bash does
	newline := strings.HasPrefix(sep, "\n")
	if !newline && strings.Contains(cmd, "#") || newline && strings.Contains(cmd, "<<") {
		return true
	}
	n := 0
	for i := len(cmd) - 1; i >= 0 && cmd[i] == '\\'; i-- {
		n++
	}
	return n%2 == 1 && (newline || sep == "; ")
}

// FuzzAllow: a fuzzed pattern that does not match the victim command never allows a
// command line in which the victim runs — joined by any list or pipe operator, or in a
// command substitution — and the victim is always among the line's commands.
func FuzzAllow(f *testing.F) {
	for _, s := range []struct {
		kind    uint8
		pattern string
		cmd     string
	}{
		{2, "git status*", "git status"}, {1, "npm run ", "npm run x"}, {2, "*", "ls"},
		{2, "echo *", "echo \\"}, {0, "git status", "git status"}, {3, "git .*", "git log"},
		{2, "ls *", "ls -la > /dev/null"}, {2, "bash -c *", "bash -c 'x'"}, {2, "[a-z]* *", "eval"},
		{2, "* *", "echo 'a"}, {3, ".*[^m].*", "x"}, {1, "git", "git commit -m 'a;b'"},
		{2, "*", "cat <<E"}, {2, "*", "f()"}, {2, "*", "time"}, {2, "e*", "eval echo"},
		{2, "echo *", "echo a # x \\"}, {2, "0*", "0\\\r"}, {2, "*", "r\x00m"},
	} {
		f.Add(s.kind, s.pattern, s.cmd)
	}
	kinds := []string{KindExact, KindPrefix, KindGlob, KindRegex}
	f.Fuzz(func(t *testing.T, k uint8, pattern, cmd string) {
		if len(cmd) > 4096 || len(pattern) > 512 {
			return
		}
		p, err := CompilePattern(kinds[int(k)%len(kinds)], pattern)
		if err != nil {
			return
		}
		vl := Parse(victim, project)
		if len(vl.Commands) != 1 || p.MatchCommand(vl.Commands[0]) {
			return
		}
		for _, sep := range []string{" $(", "; ", " && ", " || ", " | ", "\n"} {
			if absorbs(cmd, sep) {
				continue
			}
			src := cmd + sep + victim
			if sep == " $(" {
				src += ")"
			}
			l := Parse(src, project)
			if p.Allows(l) {
				t.Fatalf("%s %q allows %q (commands %q)", kinds[int(k)%len(kinds)], pattern, src, texts(l.Commands))
			}
			parsed := !slices.ContainsFunc(l.Unseen, func(u string) bool {
				return strings.HasPrefix(u, "cannot parse") || u == "too deeply nested"
			})
			if parsed && !slices.Contains(texts(l.Commands), victim) {
				t.Fatalf("%q: the victim is not among the commands %q (unseen %q)", src, texts(l.Commands), l.Unseen)
			}
		}
	})
}
