package hookkit

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestShellWordSurvivesAShell runs each quoted word through sh: what the shell passes
// on must be the word as it was, spaces, quotes and all.
func TestShellWordSurvivesAShell(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Fatal("no sh on the PATH: the quoting cannot be checked")
	}
	for _, w := range []string{"/usr/local/bin/gatehouse", "/opt/my tools/gatehouse", "it's", "http://127.0.0.1:8080/x?y=1&z=$HOME", "a;b|c`d`", ""} {
		out, err := exec.Command(sh, "-c", "printf %s "+ShellWord(w)).Output()
		if err != nil {
			t.Fatalf("%q: %v", w, err)
		}
		if string(out) != w {
			t.Errorf("ShellWord(%q) = %s: the shell read %q", w, ShellWord(w), out)
		}
	}
	if got := ShellWord("/usr/bin/gatehouse"); got != "/usr/bin/gatehouse" {
		t.Errorf("a plain path is quoted: %s", got)
	}
}

func TestCommandHookArgs(t *testing.T) {
	argv, err := CommandHookArgs("/opt/my tools/gatehouse", "gemini", "http://127.0.0.1:8080", "GH_TOKEN")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"'/opt/my tools/gatehouse'", "hook", "gemini", "--url", "http://127.0.0.1:8080", "--token-env", "GH_TOKEN"}
	if !slices.Equal(argv, want) {
		t.Errorf("argv = %q, want %q", argv, want)
	}
	if argv, _ := CommandHookArgs("gatehouse", "codex", "http://h", ""); slices.Contains(argv, "--token-env") {
		t.Errorf("no token variable, yet %q", argv)
	}
	for _, bad := range []struct{ command, tokenEnv, flag string }{
		{"", "", "--command"},
		{`/bin/ga"te`, "", "--command"},
		{`C:\gatehouse`, "", "--command"},
		{"gatehouse", "1TOKEN", "--token-env"},
		{"gatehouse", "MY-TOKEN", "--token-env"},
	} {
		if _, err := CommandHookArgs(bad.command, "codex", "http://h", bad.tokenEnv); err == nil || !strings.HasPrefix(err.Error(), bad.flag) {
			t.Errorf("command %q, token env %q: err = %v, want one about %s", bad.command, bad.tokenEnv, err, bad.flag)
		}
	}
}
