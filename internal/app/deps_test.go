package app_test

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// mayUseStore are the packages that may depend on GORM and internal/store: the store
// itself, the wiring that hands it to every service, and the commands.
var mayUseStore = []string{"internal/store", "internal/app", "cmd"}

// testSupport are packages only tests may use. The real-server harness opens a store,
// so it may reach GORM too; in exchange no non-test code may import it.
var testSupport = []string{"internal/testkit"}

// TestDependencyRules checks the layering with what the Go toolchain itself reports
// (go list -deps, test files left out). The domain declares the persistence it needs
// as small interfaces and only internal/store implements them with GORM, so no package
// outside mayUseStore depends on gorm.io/... or internal/store, directly or through
// another package; and no non-test code depends on test support.
func TestDependencyRules(t *testing.T) {
	g := loadGraph(t)
	if len(g.pkgs) < 20 {
		t.Fatalf("go list reported only %d packages of %s; the check would read nothing", len(g.pkgs), g.module)
	}
	isStore := func(p string) bool { return strings.HasPrefix(p, "gorm.io/") || g.under(p, "internal/store") }
	isTestSupport := func(p string) bool { return g.under(p, testSupport...) }
	for _, pkg := range g.pkgs {
		if !g.under(pkg, mayUseStore...) && !isTestSupport(pkg) && slices.ContainsFunc(g.deps[pkg], isStore) {
			t.Errorf("%s depends on GORM or internal/store (%s): a domain package declares the store interface it needs and internal/store implements it",
				g.short(pkg), g.via(pkg, isStore))
		}
		if !isTestSupport(pkg) && slices.ContainsFunc(g.deps[pkg], isTestSupport) {
			t.Errorf("%s depends on test support (%s), which only tests may use", g.short(pkg), g.via(pkg, isTestSupport))
		}
	}
}

// graph is the module's import graph as go list reports it.
type graph struct {
	module string
	// pkgs are the module's own packages; imports and deps cover every package listed.
	pkgs          []string
	imports, deps map[string][]string
}

func loadGraph(t *testing.T) *graph {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to read the import graph: %v", err)
	}
	g := &graph{imports: map[string][]string{}, deps: map[string][]string{}}
	g.module = strings.TrimSpace(string(goCmd(t, goBin, ".", "list", "-m")))
	root := filepath.Dir(strings.TrimSpace(string(goCmd(t, goBin, ".", "env", "GOMOD"))))
	out := goCmd(t, goBin, root, "list", "-deps", "-test=false",
		"-f", `{{.ImportPath}}|{{join .Imports ","}}|{{join .Deps ","}}`, "./...")
	for line := range strings.Lines(string(out)) {
		f := strings.Split(strings.TrimSuffix(line, "\n"), "|")
		if len(f) != 3 {
			t.Fatalf("unexpected go list line %q", line)
		}
		g.imports[f[0]], g.deps[f[0]] = strings.Split(f[1], ","), strings.Split(f[2], ",")
		if f[0] == g.module || strings.HasPrefix(f[0], g.module+"/") {
			g.pkgs = append(g.pkgs, f[0])
		}
	}
	return g
}

// under reports whether pkg is one of the module's dirs (relative paths) or below one.
func (g *graph) under(pkg string, dirs ...string) bool {
	for _, d := range dirs {
		if p := g.module + "/" + d; pkg == p || strings.HasPrefix(pkg, p+"/") {
			return true
		}
	}
	return false
}

func (g *graph) short(pkg string) string { return strings.TrimPrefix(pkg, g.module+"/") }

// via names how pkg reaches a bad package: the bad packages it imports itself, or
// else its imports that reach one.
func (g *graph) via(pkg string, bad func(string) bool) string {
	var direct, through []string
	for _, d := range g.imports[pkg] {
		switch {
		case bad(d):
			direct = append(direct, g.short(d))
		case slices.ContainsFunc(g.deps[d], bad):
			through = append(through, g.short(d))
		}
	}
	if len(direct) > 0 {
		return "imports " + strings.Join(direct, ", ")
	}
	return "through " + strings.Join(through, ", ")
}

// goCmd runs the go command in dir and returns its standard output.
func goCmd(t *testing.T, goBin, dir string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(goBin, args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return out
}
