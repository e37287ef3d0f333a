// Package testnpm finds the real npm clients (MCP SDKs, MCP servers, Claude Code) that
// tests drive. It imports nothing of Gatehouse, so any package's tests may use it.
package testnpm

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// RequireClientsEnv names the variable that turns a missing real client (an npm
// package, node) from a skip into a failure. .ci/run sets it: in CI every real-client
// test must run.
const RequireClientsEnv = "GATEHOUSE_REQUIRE_CLIENTS"

// NodeModule returns the absolute path of rel inside the repository's node_modules
// (for example "@modelcontextprotocol/server-everything/dist/index.js" or
// ".bin/claude"). When it is missing the test is skipped with a hint to run `npm ci`,
// or fails when RequireClientsEnv is set.
func NodeModule(t testing.TB, rel string) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "package.json")); err == nil {
			p := filepath.Join(dir, "node_modules", rel)
			if _, err := os.Stat(p); err != nil {
				missingClient(t, "node_modules/"+rel+" is not installed; run `npm ci` in "+dir)
			}
			return p
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			missingClient(t, "no package.json above the test's directory; run `npm ci` at the repository root")
			return ""
		}
		dir = parent
	}
}

// Node returns the path of the node binary, skipping (or failing in CI) without it.
func Node(t testing.TB) string {
	t.Helper()
	p, err := exec.LookPath("node")
	if err != nil {
		missingClient(t, "node is not on PATH; install Node.js 20 or newer")
	}
	return p
}

func missingClient(t testing.TB, hint string) {
	t.Helper()
	if os.Getenv(RequireClientsEnv) != "" {
		t.Fatalf("%s (%s is set: real clients are mandatory)", hint, RequireClientsEnv)
	}
	t.Skip(hint)
}
