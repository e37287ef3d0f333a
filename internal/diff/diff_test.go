package diff

import (
	"strings"
	"testing"
)

func ops(lines []Line) string {
	var b strings.Builder
	for _, l := range lines {
		b.WriteString([]string{" ", "+", "-", "@"}[l.Op])
	}
	return b.String()
}

func TestCompute(t *testing.T) {
	lines, cut := Compute("a\nb\nc", "a\nB\nc\nd\n")
	if cut || ops(lines) != " -+ +" {
		t.Fatalf("ops %q cut %v: %+v", ops(lines), cut, lines)
	}
	if l := lines[4]; l.Text != "d" || l.New != 4 || l.Old != 0 {
		t.Errorf("last line %+v", l)
	}
	if l := lines[1]; l.Text != "b" || l.Old != 2 || l.New != 0 {
		t.Errorf("removed line %+v", l)
	}
	big := strings.Repeat("x\n", MaxInput)
	if _, cut := Compute(big, ""); !cut {
		t.Error("an input over MaxInput is not reported as cut")
	}
}

func TestUnifiedGitDiff(t *testing.T) {
	text := "diff --git a/x.go b/x.go\nindex 1..2 100644\n--- a/x.go\n+++ b/x.go\n@@ -10,3 +10,4 @@ func f() {\n a\n--- not a header\n+b\n+c\n d\n" +
		"--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1 @@\n+hello\n\\ No newline at end of file\n"
	files, ok := Unified(text)
	if !ok || len(files) != 2 {
		t.Fatalf("ok=%v files=%+v", ok, files)
	}
	f := files[0]
	if f.Path != "x.go" || ops(f.Lines) != "@ -++ " {
		t.Errorf("first file %q ops %q", f.Path, ops(f.Lines))
	}
	if l := f.Lines[2]; l.Text != "-- not a header" || l.Old != 11 {
		t.Errorf("removed line inside a hunk: %+v", l)
	}
	if l := f.Lines[5]; l.Old != 12 || l.New != 13 {
		t.Errorf("context numbers: %+v", l)
	}
	if files[1].Path != "new.txt" || files[1].Change != "add" || ops(files[1].Lines) != "@+" || files[1].Lines[1].New != 1 {
		t.Errorf("second file %+v", files[1])
	}
	if _, ok := Unified("just text\n"); ok {
		t.Error("plain text parsed as a diff")
	}
}

func TestPatchInHeredoc(t *testing.T) {
	cmd := "apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: a.py\n@@ def f():\n-    return 1\n+    return 2\n*** Add File: b.py\n+x = 1\n*** End Patch\nEOF\n"
	files, ok := Patch(cmd)
	if !ok || len(files) != 2 || files[0].Path != "a.py" || !files[0].Relative || ops(files[0].Lines) != "@-+" || files[1].Change != "add" {
		t.Fatalf("ok=%v %+v", ok, files)
	}
	if !IsPatch(cmd) || IsPatch("ls -la") {
		t.Error("IsPatch")
	}
}

func TestLayoutElidesAndCuts(t *testing.T) {
	old := strings.Repeat("same\n", 20) + "old\n" + strings.Repeat("same\n", 20)
	lines, _ := Compute(old, strings.Replace(old, "old", "new", 1))
	blocks, cut := Layout(lines, Options{Context: 1, MinFold: 3, Elide: true, MaxLines: 8}, &Budget{Left: 1 << 20})
	if cut || len(blocks) != 3 || blocks[0].Hidden != 19 || len(blocks[1].Lines) != 4 || blocks[2].Hidden != 19 {
		t.Fatalf("cut=%v blocks=%+v", cut, blocks)
	}
	if blocks[0].Summary() != "19 unchanged lines" {
		t.Errorf("summary %q", blocks[0].Summary())
	}
	added, _ := Added(strings.Repeat("x\n", 20))
	if _, cut := Layout(added, Options{MaxLines: 8, Elide: true}, &Budget{Left: 1 << 20}); !cut {
		t.Error("20 added lines fit in 8")
	}
	if _, cut := Layout(added, Options{}, &Budget{Left: 5}); !cut {
		t.Error("the budget does not bound the layout")
	}
}
