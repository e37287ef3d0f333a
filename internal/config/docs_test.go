package config

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestEverySettingIsDocumented: each setting has one row in the documented
// configuration table (README.md or docs/), with its environment variable and its
// default as the code has them — so the manual never drifts from the binary.
func TestEverySettingIsDocumented(t *testing.T) {
	files, _ := filepath.Glob("../../docs/*.md")
	files = append(files, "../../README.md")
	row := regexp.MustCompile("^\\| `--([a-z0-9-]+)` \\| `([A-Z0-9_]+)` \\| ([^|]*) \\|")
	documented := map[string][]string{}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(raw), "\n") {
			if m := row.FindStringSubmatch(line); m != nil {
				documented[m[1]] = []string{m[2], strings.TrimSpace(m[3])}
			}
		}
	}
	for _, s := range settings {
		doc, ok := documented[s.flag]
		if !ok {
			t.Errorf("--%s has no row in the configuration table", s.flag)
			continue
		}
		if doc[0] != s.env {
			t.Errorf("--%s: documented environment variable %s, the code reads %s", s.flag, doc[0], s.env)
		}
		if s.def == "" {
			if !regexp.MustCompile(`^(empty|none|off|generated)`).MatchString(doc[1]) {
				t.Errorf("--%s: documented default %q, the code has none", s.flag, doc[1])
			}
		} else if !strings.Contains(doc[1], "`"+s.def+"`") {
			t.Errorf("--%s: documented default %q, the code has %q", s.flag, doc[1], s.def)
		}
	}
}
