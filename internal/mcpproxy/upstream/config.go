// Package upstream drives real MCP servers that stand behind Gatehouse's MCP proxy:
// stdio commands spawned per Gatehouse session and streamable-HTTP endpoints, both
// through the official Go SDK client. Their tools are offered namespaced
// ("server__tool") so a policy can tell which server a call goes to.
package upstream

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// DefaultTimeout bounds one call to an upstream server when its config names none.
const DefaultTimeout = 5 * time.Minute

// Separator joins a server name and a tool name into the name an MCP client sees.
// Server names may not contain it, so the first occurrence splits a name exactly.
const Separator = "__"

// serverName is what a server may be called: it becomes part of every tool name a
// model sees and a policy matches, so it stays plain.
var serverName = regexp.MustCompile(`^[a-z0-9_-]+$`)

// Config is the parsed --mcp-servers file.
type Config struct {
	// Servers in file order, so tool listings are stable.
	Servers []Server
}

// Server is one upstream MCP server: exactly one of Command (stdio) or URL
// (streamable HTTP) is set.
type Server struct {
	Name string

	// Stdio: the command is spawned once per Gatehouse session, with Env added to a
	// minimal environment (PATH and HOME of Gatehouse itself) so Gatehouse's own
	// secrets are not handed to every server.
	Command string
	Args    []string
	Env     map[string]string
	Cwd     string

	// Streamable HTTP.
	URL     string
	Headers map[string]string

	// Timeout bounds each call (and the handshake that may precede it).
	Timeout time.Duration
}

// Stdio reports whether the server is a command rather than a URL.
func (s Server) Stdio() bool { return s.Command != "" }

// LoadFile reads and validates the YAML file at path. An empty path means no upstream
// servers are configured: nil config, nil error.
func LoadFile(path string) (*Config, error) {
	if path == "" {
		return nil, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("mcp servers: %w", err)
	}
	cfg, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return cfg, nil
}

// serverFile is one server entry as written; Timeout stays a string so a bad duration
// can be reported with its line.
type serverFile struct {
	Command string            `yaml:"command"`
	Args    []string          `yaml:"args"`
	Env     map[string]string `yaml:"env"`
	Cwd     string            `yaml:"cwd"`
	URL     string            `yaml:"url"`
	Headers map[string]string `yaml:"headers"`
	Timeout string            `yaml:"timeout"`
}

var knownServerKeys = []string{"command", "args", "env", "cwd", "url", "headers", "timeout"}

// Parse validates a --mcp-servers document. Errors name the line and the server.
func Parse(data []byte) (*Config, error) {
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return &Config{}, nil
		}
		return nil, err
	}
	if len(doc.Content) == 0 {
		return &Config{}, nil
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("line %d: expected a mapping with a \"servers\" key", root.Line)
	}
	cfg := &Config{}
	for i := 0; i+1 < len(root.Content); i += 2 {
		key, val := root.Content[i], root.Content[i+1]
		if key.Value != "servers" {
			return nil, fmt.Errorf("line %d: unknown key %q (expected \"servers\")", key.Line, key.Value)
		}
		if val.Kind == yaml.ScalarNode && val.Tag == "!!null" {
			continue
		}
		if val.Kind != yaml.MappingNode {
			return nil, fmt.Errorf("line %d: \"servers\" must be a mapping of server names", val.Line)
		}
		for j := 0; j+1 < len(val.Content); j += 2 {
			s, err := parseServer(val.Content[j], val.Content[j+1])
			if err != nil {
				return nil, err
			}
			if slices.ContainsFunc(cfg.Servers, func(o Server) bool { return o.Name == s.Name }) {
				return nil, fmt.Errorf("line %d: server %q is configured twice", val.Content[j].Line, s.Name)
			}
			cfg.Servers = append(cfg.Servers, s)
		}
	}
	return cfg, nil
}

func parseServer(key, val *yaml.Node) (Server, error) {
	name := key.Value
	fail := func(line int, format string, a ...any) (Server, error) {
		return Server{}, fmt.Errorf("line %d: server %q: %s", line, name, fmt.Sprintf(format, a...))
	}
	if !serverName.MatchString(name) {
		return fail(key.Line, "name must match [a-z0-9_-]+")
	}
	if strings.Contains(name, Separator) {
		return fail(key.Line, "name must not contain %q (it separates server and tool)", Separator)
	}
	if val.Kind != yaml.MappingNode {
		return fail(val.Line, "expected a mapping with command or url")
	}
	for i := 0; i < len(val.Content); i += 2 {
		if k := val.Content[i]; !slices.Contains(knownServerKeys, k.Value) {
			return fail(k.Line, "unknown field %q", k.Value)
		}
	}
	var f serverFile
	if err := val.Decode(&f); err != nil {
		return fail(val.Line, "%v", err)
	}
	s := Server{Name: name, Command: f.Command, Args: f.Args, Env: f.Env, Cwd: f.Cwd,
		URL: f.URL, Headers: f.Headers, Timeout: DefaultTimeout}
	switch {
	case f.Command == "" && f.URL == "":
		return fail(val.Line, "needs either command (stdio) or url (streamable HTTP)")
	case f.Command != "" && f.URL != "":
		return fail(val.Line, "has both command and url; choose one")
	case f.URL != "":
		if len(f.Args) > 0 || len(f.Env) > 0 || f.Cwd != "" {
			return fail(val.Line, "args, env and cwd apply to a command, not a url")
		}
		u, err := url.Parse(f.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fail(fieldLine(val, "url"), "url %q must be an absolute http(s) URL", f.URL)
		}
	default:
		if len(f.Headers) > 0 {
			return fail(val.Line, "headers apply to a url, not a command")
		}
	}
	if f.Timeout != "" {
		d, err := time.ParseDuration(f.Timeout)
		if err != nil || d <= 0 {
			return fail(fieldLine(val, "timeout"), "timeout %q must be a positive duration such as 60s or 5m", f.Timeout)
		}
		s.Timeout = d
	}
	return s, nil
}

// fieldLine is the line of key inside a mapping node, or the mapping's own line.
func fieldLine(m *yaml.Node, key string) int {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i].Line
		}
	}
	return m.Line
}
