package docs

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// root is the repository root: the first parent directory holding go.mod.
func root(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}

// documents are README.md and every Markdown file under docs/.
func documents(t *testing.T, base string) []string {
	t.Helper()
	out := []string{filepath.Join(base, "README.md")}
	err := filepath.WalkDir(filepath.Join(base, "docs"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".md") {
			out = append(out, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestReadmeIntroduces: the README stays an introduction; the manual lives in docs/.
func TestReadmeIntroduces(t *testing.T) {
	fi, err := os.Stat(filepath.Join(root(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() > 12*1024 {
		t.Fatalf("README.md is %d bytes; keep it under 12 KiB and move detail to docs/", fi.Size())
	}
}

// TestDocumentsSpeakOfTheProduct: no issue numbers, build history or paths a user does
// not have.
func TestDocumentsSpeakOfTheProduct(t *testing.T) {
	base := root(t)
	bad := regexp.MustCompile(`(?i)\bissue #?\d|\.\./shared|\bSPEC\.md\b|\bsession \d+\b|\bthis session\b`)
	for _, p := range documents(t, base) {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			if m := bad.FindString(line); m != "" {
				rel, _ := filepath.Rel(base, p)
				t.Errorf("%s:%d speaks of %q: %s", rel, i+1, m, line)
			}
		}
	}
}

var (
	link    = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	heading = regexp.MustCompile(`^#{1,6} +(.+?) *$`)
	notSlug = regexp.MustCompile(`[^\p{L}\p{N}\- ]`)
)

// anchors are a Markdown file's heading anchors, made the way GitHub makes them.
func anchors(text string) map[string]bool {
	out := map[string]bool{}
	fence := false
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, "```") {
			fence = !fence
		}
		m := heading.FindStringSubmatch(l)
		if fence || m == nil {
			continue
		}
		slug := strings.ReplaceAll(notSlug.ReplaceAllString(strings.ToLower(m[1]), ""), " ", "-")
		for n, s := 1, slug; ; n++ {
			if !out[s] {
				out[s] = true
				break
			}
			s = slug + "-" + string(rune('0'+n))
		}
	}
	return out
}

// TestRelativeLinksResolve: every relative link in the README and docs/ names a file
// that exists, and every #anchor a heading in it.
func TestRelativeLinksResolve(t *testing.T) {
	base := root(t)
	for _, p := range documents(t, base) {
		b, _ := os.ReadFile(p)
		fence := false
		for i, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(line, "```") {
				fence = !fence
			}
			if fence {
				continue
			}
			for _, m := range link.FindAllStringSubmatch(line, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				file, frag, _ := strings.Cut(target, "#")
				dest := p
				if file != "" {
					dest = filepath.Join(filepath.Dir(p), file)
				}
				rel, _ := filepath.Rel(base, p)
				body, err := os.ReadFile(dest)
				if err != nil {
					if fi, serr := os.Stat(dest); serr == nil && fi.IsDir() && frag == "" {
						continue
					}
					t.Errorf("%s:%d links to %s, which does not exist", rel, i+1, target)
					continue
				}
				if frag != "" && !anchors(string(body))[frag] {
					t.Errorf("%s:%d links to %s: no heading makes #%s", rel, i+1, target, frag)
				}
			}
		}
	}
}

// TestNoLargeTrackedFiles: the repository carries source, not binaries or data a build
// makes again.
func TestNoLargeTrackedFiles(t *testing.T) {
	base := root(t)
	if _, err := os.Stat(filepath.Join(base, ".git")); err != nil {
		t.Skip("not a git checkout")
	}
	out, err := exec.Command("git", "-C", base, "ls-files", "-z").Output()
	if err != nil {
		t.Skipf("git ls-files: %v", err)
	}
	for _, f := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		if fi, err := os.Stat(filepath.Join(base, f)); err == nil && fi.Size() > 1<<20 {
			t.Errorf("%s is %d bytes: keep tracked files under 1 MiB", f, fi.Size())
		}
	}
}
