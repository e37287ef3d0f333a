package agents_test

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/internal/agents"
)

// allowedImports are the only module packages an agent package may import: an agent
// is a translation of its hook protocol, nothing more (hookkit holds what agents of
// one hook shape share).
var allowedImports = map[string]bool{
	"github.com/gatehouse-dev/gatehouse/models":                  true,
	"github.com/gatehouse-dev/gatehouse/internal/shell":          true,
	"github.com/gatehouse-dev/gatehouse/internal/agents/hookkit": true,
}

// TestAgentPackageImports: every agent package (a folder under internal/agents,
// hookkit included) imports the standard library, models, internal/shell and hookkit
// only.
func TestAgentPackageImports(t *testing.T) {
	dirs, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, d := range dirs {
		if !d.IsDir() || d.Name() == "testdata" {
			continue
		}
		files, _ := filepath.Glob(filepath.Join(d.Name(), "*.go"))
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			ast, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			n++
			for _, imp := range ast.Imports {
				p, _ := strconv.Unquote(imp.Path.Value)
				if strings.Contains(strings.SplitN(p, "/", 2)[0], ".") && !allowedImports[p] {
					t.Errorf("%s imports %s; an agent package imports only the standard library, models, internal/shell and hookkit", f, p)
				}
			}
		}
	}
	if n == 0 {
		t.Fatal("no agent package found")
	}
}

// TestRegistry: names are distinct, every agent parks at least one event, and Lookup
// finds each by its name.
func TestRegistry(t *testing.T) {
	reg := agents.Default()
	seen := map[string]bool{}
	for _, a := range reg.All() {
		if seen[a.Name()] {
			t.Errorf("two agents named %s", a.Name())
		}
		seen[a.Name()] = true
		if len(a.Events()) == 0 || a.Vendor() == "" {
			t.Errorf("%s: events %v, vendor %q", a.Name(), a.Events(), a.Vendor())
		}
		if got, ok := reg.Lookup(a.Name()); !ok || got.Name() != a.Name() {
			t.Errorf("Lookup(%s) = %v, %v", a.Name(), got, ok)
		}
	}
	if _, ok := reg.Lookup("nope"); ok {
		t.Error("Lookup(nope) found an agent")
	}
	if got := agents.JoinOr([]string{"a", "b", "c"}); got != "a, b or c" {
		t.Errorf("JoinOr = %q", got)
	}
}
