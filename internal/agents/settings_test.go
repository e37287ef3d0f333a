package agents_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/agents"
	"github.com/gatehouse-dev/gatehouse/models"
)

// TestSettings: every agent either installs hooks that reach its own route
// (/v1/hooks/<name>, or `gatehouse hook <name>`) with a timeout above the server's
// wait, or says explicitly that it installs none — the Codex app-server and ACP
// agents, whose requests come through a bridge.
func TestSettings(t *testing.T) {
	o := models.SettingsOptions{URL: "https://gh.example.com", Auth: "none", Command: "gatehouse",
		Wait: time.Hour, Events: []string{"PermissionRequest"}}
	none := map[string]bool{}
	for _, a := range agents.Default().All() {
		s, err := a.Settings(o)
		if errors.Is(err, models.ErrNoSettings) {
			none[a.Name()] = true
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", a.Name(), err)
			continue
		}
		if !strings.Contains(s.Text, "gatehouse hook "+a.Name()+" --url https://gh.example.com") || !strings.Contains(s.Text, "3630") {
			t.Errorf("%s: snippet does not run its hook with a timeout of 3630 s:\n%s", a.Name(), s.Text)
		}
	}
	// Exactly the bridged agents (the Codex app-server, OpenCode) install nothing.
	for _, a := range agents.Default().All() {
		if _, bridged := a.(agents.Bridged); bridged != none[a.Name()] {
			t.Errorf("%s: bridged %v, but installs no settings %v", a.Name(), bridged, none[a.Name()])
		}
	}
	if !none["codex-app-server"] || !none["opencode"] {
		t.Errorf("agents installing nothing: %v, want codex-app-server and opencode", none)
	}
	// `gatehouse hook <agent>` forwards for exactly the agents whose snippet runs it.
	for _, a := range agents.Default().All() {
		if _, forwarded := agents.Default().Forwardable().Lookup(a.Name()); forwarded == none[a.Name()] {
			t.Errorf("%s: forwardable %v, but installs settings %v", a.Name(), forwarded, !none[a.Name()])
		}
	}
}
