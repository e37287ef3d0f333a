package rules

import "testing"

// TestRuleTargetsComeFromTheTool: a rule compares the field its tool's kind names, made
// canonical (a clean absolute path, a parsed URL), and an allow never matches an input
// that carries a second target the rule does not look at.
func TestRuleTargetsComeFromTheTool(t *testing.T) {
	cases := []struct {
		name                string
		tool, kind, pattern string
		argument            string
		input               map[string]any
		cwd                 string
		allow, deny         bool
	}{
		// The review's repro: an exact Write rule and a "command" key naming its path.
		{"write with a stray command", "Write", MatchExact, "/repo/notes.txt", "",
			map[string]any{"file_path": "/home/alice/.ssh/authorized_keys", "content": "ssh-rsa AAAA", "command": "/repo/notes.txt"}, "", false, false},
		{"write with a stray command naming the same file", "Write", MatchExact, "/repo/notes.txt", "",
			map[string]any{"file_path": "/repo/notes.txt", "command": "rm -rf ~"}, "", false, true},
		{"write exact", "Write", MatchExact, "/repo/notes.txt", "", map[string]any{"file_path": "/repo/notes.txt", "content": "x"}, "", true, true},
		{"write relative to cwd", "Write", MatchExact, "/repo/notes.txt", "", map[string]any{"file_path": "notes.txt"}, "/repo", true, true},
		{"relative with no cwd", "Write", MatchExact, "/repo/notes.txt", "", map[string]any{"file_path": "notes.txt"}, "", false, false},
		{"dot-dot out of the tree", "Edit", MatchGlob, "/repo/**", "", map[string]any{"file_path": "/repo/../home/alice/.bashrc"}, "", false, false},
		{"dot-dot inside the tree", "Edit", MatchGlob, "/repo/**", "", map[string]any{"file_path": "/repo/a/../b.go"}, "", true, true},
		{"file prefix at a segment", "Read", MatchPrefix, "/repo/src", "", map[string]any{"file_path": "/repo/src/a.go"}, "", true, true},
		{"file prefix not mid-name", "Read", MatchPrefix, "/repo/src", "", map[string]any{"file_path": "/repo/srcx/a.go"}, "", false, false},
		{"notebook field", "NotebookEdit", MatchGlob, "/repo/**", "", map[string]any{"notebook_path": "/repo/a.ipynb"}, "", true, true},
		{"notebook with a stray file_path", "NotebookEdit", MatchGlob, "/repo/**", "", map[string]any{"notebook_path": "/repo/a.ipynb", "file_path": "/etc/passwd"}, "", false, true},
		{"missing field", "Write", MatchGlob, "/**", "", map[string]any{"path": "/repo/a"}, "", false, false},
		// URLs are parsed: the host exactly or as a *. subdomain, the path at segments.
		{"url prefix", "WebFetch", MatchPrefix, "https://docs.example.com", "", map[string]any{"url": "https://docs.example.com/guide"}, "", true, true},
		{"url prefix host suffix", "WebFetch", MatchPrefix, "https://docs.example.com", "", map[string]any{"url": "https://docs.example.com.evil.example/x"}, "", false, false},
		{"url user info", "WebFetch", MatchPrefix, "https://docs.example.com", "", map[string]any{"url": "https://docs.example.com@evil.example/x"}, "", false, false},
		{"url other scheme", "WebFetch", MatchPrefix, "https://docs.example.com", "", map[string]any{"url": "http://docs.example.com/x"}, "", false, false},
		{"url other port", "WebFetch", MatchPrefix, "https://docs.example.com", "", map[string]any{"url": "https://docs.example.com:8443/x"}, "", false, false},
		{"url default port", "WebFetch", MatchPrefix, "https://docs.example.com", "", map[string]any{"url": "https://DOCS.example.com:443/x"}, "", true, true},
		{"url path segment", "WebFetch", MatchPrefix, "https://docs.example.com/api", "", map[string]any{"url": "https://docs.example.com/api/v1?x=1"}, "", true, true},
		{"url path not mid-segment", "WebFetch", MatchPrefix, "https://docs.example.com/api", "", map[string]any{"url": "https://docs.example.com/apikeys"}, "", false, false},
		{"url dot segments", "WebFetch", MatchPrefix, "https://docs.example.com/api", "", map[string]any{"url": "https://docs.example.com/api/../admin"}, "", false, false},
		{"url subdomain", "WebFetch", MatchPrefix, "https://*.example.com", "", map[string]any{"url": "https://a.b.example.com/x"}, "", true, true},
		{"url subdomain not the apex's lookalike", "WebFetch", MatchPrefix, "https://*.example.com", "", map[string]any{"url": "https://evilexample.com/x"}, "", false, false},
		{"url glob cannot cross the host", "WebFetch", MatchGlob, "https://*.example.com/**", "", map[string]any{"url": "https://evil.com?.example.com/x"}, "", false, false},
		{"url glob fragment dropped", "WebFetch", MatchGlob, "https://*.example.com/**", "", map[string]any{"url": "https://evil.com#.example.com/x"}, "", false, false},
		{"url glob", "WebFetch", MatchGlob, "https://*.example.com/**", "", map[string]any{"url": "https://docs.example.com/a/b"}, "", true, true},
		{"url with a stray command", "WebFetch", MatchPrefix, "https://docs.example.com", "", map[string]any{"url": "https://docs.example.com/", "command": "x"}, "", false, true},
		// Other and MCP tools: one named argument, or the whole input.
		{"mcp argument", "mcp__fs__read", MatchGlob, "/repo/**", "path", map[string]any{"path": "/repo/a", "encoding": "utf8"}, "", true, true},
		{"mcp argument missing", "mcp__fs__read", MatchGlob, "/repo/**", "path", map[string]any{"file": "/repo/a"}, "", false, false},
		{"mcp whole input", "read_file", MatchExact, `{"path":"/repo/a"}`, "", map[string]any{"path": "/repo/a"}, "", true, true},
		{"mcp whole input pins every argument", "read_file", MatchExact, `{"path":"/repo/a"}`, "", map[string]any{"path": "/repo/a", "x": 1}, "", false, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m, err := compileRule(tc.tool, tc.kind, tc.pattern, tc.argument)
			if err != nil {
				t.Fatalf("compile: %v", err)
			}
			subj := Subject{Tool: tc.tool, Input: tc.input, Cwd: tc.cwd}
			if got := m.matches(subj, true); got != tc.allow {
				t.Errorf("allow reading = %v, want %v", got, tc.allow)
			}
			if got := m.matches(subj, false); got != tc.deny {
				t.Errorf("deny reading = %v, want %v", got, tc.deny)
			}
		})
	}
}

func TestRulePatternsMustFitTheirTool(t *testing.T) {
	for _, tc := range []struct{ tool, kind, pattern, argument string }{
		{"Write", MatchExact, "notes.txt", ""},
		{"Read", MatchPrefix, "src/", ""},
		{"Edit", MatchGlob, "src/*.go", ""},
		{"WebFetch", MatchPrefix, "docs.example.com", ""},
		{"WebFetch", MatchPrefix, "ftp://docs.example.com", ""},
		{"WebFetch", MatchPrefix, "https://docs.example.com/?q=1", ""},
		{"WebFetch", MatchExact, "https://user@docs.example.com/", ""},
		{"Bash", MatchPrefix, "git status", "command"},
	} {
		if _, err := compileRule(tc.tool, tc.kind, tc.pattern, tc.argument); err == nil {
			t.Errorf("%s %s %q (argument %q) compiled", tc.tool, tc.kind, tc.pattern, tc.argument)
		}
	}
}
