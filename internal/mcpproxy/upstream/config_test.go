package upstream

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	cfg, err := Parse([]byte(`
servers:
  everything:
    command: node
    args: ["/srv/index.js", "stdio"]
    env: {FOO: bar, N: 1}
    cwd: /tmp
    timeout: 60s
  remote:
    url: https://example.com/mcp
    headers: {Authorization: "Bearer x"}
`))
	if err != nil {
		t.Fatal(err)
	}
	want := []Server{
		{Name: "everything", Command: "node", Args: []string{"/srv/index.js", "stdio"},
			Env: map[string]string{"FOO": "bar", "N": "1"}, Cwd: "/tmp", Timeout: 60 * time.Second},
		{Name: "remote", URL: "https://example.com/mcp",
			Headers: map[string]string{"Authorization": "Bearer x"}, Timeout: DefaultTimeout},
	}
	if !reflect.DeepEqual(cfg.Servers, want) {
		t.Errorf("got %+v\nwant %+v", cfg.Servers, want)
	}
}

// TestParseErrors: every mistake is refused with the line and the server it is on.
func TestParseErrors(t *testing.T) {
	for _, tc := range []struct {
		name, yaml, want string
	}{
		{"no command nor url", "servers:\n  a:\n    cwd: /\n", `line 3: server "a": needs either command`},
		{"both", "servers:\n  a:\n    command: x\n    url: http://h/\n", `line 3: server "a": has both command and url`},
		{"upper case name", "servers:\n  Bad:\n    command: x\n", `line 2: server "Bad": name must match`},
		{"separator in name", "servers:\n  a__b:\n    command: x\n", `line 2: server "a__b": name must not contain "__"`},
		{"bad duration", "servers:\n  a:\n    command: x\n    timeout: soon\n", `line 4: server "a": timeout "soon"`},
		{"negative duration", "servers:\n  a:\n    command: x\n    timeout: -1s\n", `line 4: server "a": timeout "-1s"`},
		{"unknown field", "servers:\n  a:\n    command: x\n    comand: y\n", `line 4: server "a": unknown field "comand"`},
		{"relative url", "servers:\n  a:\n    url: /mcp\n", `line 3: server "a": url "/mcp"`},
		{"headers on command", "servers:\n  a:\n    command: x\n    headers: {A: b}\n", `server "a": headers apply to a url`},
		{"env on url", "servers:\n  a:\n    url: http://h/\n    env: {A: b}\n", `server "a": args, env and cwd apply to a command`},
		{"twice", "servers:\n  a:\n    command: x\n  a:\n    command: y\n", `server "a" is configured twice`},
		{"unknown top-level key", "server:\n  a:\n    command: x\n", `line 1: unknown key "server"`},
		{"args not a list", "servers:\n  a:\n    command: x\n    args: y\n", `line 3: server "a"`},
		{"servers a list", "servers:\n  - a\n", `line 2: "servers" must be a mapping`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.yaml))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestLoadFile(t *testing.T) {
	if cfg, err := LoadFile(""); cfg != nil || err != nil {
		t.Errorf("empty path: %v, %v; want nil, nil", cfg, err)
	}
	path := filepath.Join(t.TempDir(), "servers.yaml")
	if err := os.WriteFile(path, []byte("servers:\n  a:\n    timeout: 1s\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadFile(path); err == nil || !strings.HasPrefix(err.Error(), path+": line 3:") {
		t.Errorf("err = %v, want it to start with the file and line", err)
	}
	if _, err := LoadFile(path + ".missing"); err == nil {
		t.Error("a missing file was accepted")
	}
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if cfg, err := LoadFile(path); err != nil || len(cfg.Servers) != 0 {
		t.Errorf("empty file: %+v, %v", cfg, err)
	}
}

func TestOwns(t *testing.T) {
	p := New(&Config{Servers: []Server{{Name: "everything", Command: "x", Timeout: time.Second}}}, Options{})
	defer p.Close()
	for _, tc := range []struct {
		name, server, tool string
		ok                 bool
	}{
		{"everything__echo", "everything", "echo", true},
		{"everything__a__b", "everything", "a__b", true},
		{"everything__", "", "", false},
		{"other__echo", "", "", false},
		{"everythingecho", "", "", false},
		{"deploy", "", "", false},
	} {
		server, tool, ok := p.Owns(tc.name)
		if server != tc.server || tool != tc.tool || ok != tc.ok {
			t.Errorf("Owns(%q) = %q, %q, %v", tc.name, server, tool, ok)
		}
	}
}

func TestHumanDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{60 * time.Second: "60s", 5 * time.Minute: "5m", time.Hour: "1h", 90 * time.Second: "90s", 150 * time.Second: "150s", 1500 * time.Millisecond: "1.5s"} {
		if got := humanDuration(d); got != want {
			t.Errorf("humanDuration(%v) = %q, want %q", d, got, want)
		}
	}
}
