package rules

import "testing"

func TestPatterns(t *testing.T) {
	cases := []struct {
		kind, pattern, target string
		want                  bool
	}{
		{MatchExact, "npm run deploy", "npm run deploy", true},
		{MatchExact, "npm run deploy", "npm run deploy --prod", false},
		{MatchPrefix, "npm run ", "npm run build", true},
		{MatchPrefix, "npm run ", "npm runx", false},
		{MatchGlob, "/repo/src/*.go", "/repo/src/main.go", true},
		{MatchGlob, "/repo/src/*.go", "/repo/src/sub/main.go", false},
		{MatchGlob, "/repo/src/**", "/repo/src/sub/main.go", true},
		{MatchGlob, "/repo/src/**", "/repo/srcx/main.go", false},
		{MatchGlob, "file?.txt", "file1.txt", true},
		{MatchGlob, "file[0-9].txt", "filex.txt", false},
		{MatchGlob, "file[!0-9].txt", "filex.txt", true},
		{MatchGlob, `a\*b`, "a*b", true},
		{MatchGlob, `a\*b`, "axb", false},
		{MatchGlob, "git status*", "git status --short", true},
		{MatchGlob, "(x).+", "(x).+", true}, // regexp metacharacters are literal
		{MatchRegex, `git (status|diff)`, "git diff", true},
		{MatchRegex, `git (status|diff)`, "git diff; rm -rf /", false}, // anchored
	}
	for _, tc := range cases {
		m, err := compile(tc.kind, tc.pattern)
		if err != nil {
			t.Fatalf("%s %q: %v", tc.kind, tc.pattern, err)
		}
		if got := m(tc.target); got != tc.want {
			t.Errorf("%s %q on %q = %v, want %v", tc.kind, tc.pattern, tc.target, got, tc.want)
		}
	}
	for _, bad := range []struct{ kind, pattern string }{
		{MatchGlob, "[abc"}, {MatchGlob, "abc]"}, {MatchGlob, `abc\`}, {MatchRegex, "(a"}, {"fuzzy", "a"},
	} {
		if _, err := compile(bad.kind, bad.pattern); err == nil {
			t.Errorf("%s %q compiled", bad.kind, bad.pattern)
		}
	}
}

func TestOfferPattern(t *testing.T) {
	cases := []struct {
		tool  string
		input map[string]any
		want  string
	}{
		{"Bash", map[string]any{"command": "ls -la", "description": "list"}, "ls -la"},
		{"Write", map[string]any{"file_path": "/repo/a.go", "content": "x"}, "/repo/a.go"},
		{"WebFetch", map[string]any{"url": "https://example.com", "prompt": "read"}, "https://example.com"},
		// The field comes from the tool, never from whichever key comes first.
		{"Write", map[string]any{"command": "/repo/notes.txt", "file_path": "/home/a/.ssh/authorized_keys"}, "/home/a/.ssh/authorized_keys"},
		{"mcp__fs__write", map[string]any{"b": 1.50, "a": "x"}, `{"a":"x","b":1.5}`},
		{"mcp__fs__write", nil, `{}`},
	}
	for _, tc := range cases {
		if got := OfferPattern(tc.tool, tc.input); got != tc.want {
			t.Errorf("OfferPattern(%s, %v) = %q, want %q", tc.tool, tc.input, got, tc.want)
		}
	}
}

func TestUnderDir(t *testing.T) {
	for _, tc := range []struct {
		dir, root string
		want      bool
	}{
		{"/repo", "/repo", true}, {"/repo/sub", "/repo", true}, {"/repo/../etc", "/repo", false},
		{"/repository", "/repo", false}, {"", "/repo", false}, {"repo", "/repo", false}, {"/x", "/", true},
	} {
		if got := underDir(tc.dir, tc.root); got != tc.want {
			t.Errorf("underDir(%q, %q) = %v", tc.dir, tc.root, got)
		}
	}
}
