// Package onboard is what a person meets before any agent is connected: the one
// command that connects each agent to this server, and a harmless test prompt to try
// the approval page on. The test prompt is a real Claude Code PermissionRequest payload
// decoded by the Claude Code integration and opened like any other prompt, so what the
// person sees and answers is exactly what their agents will bring.
package onboard

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/agents"
	"github.com/gatehouse-dev/gatehouse/internal/elicit"
	"github.com/gatehouse-dev/gatehouse/internal/sessions"
	"github.com/gatehouse-dev/gatehouse/models"
)

// testSession is the external id of each person's test-prompt session: one per person,
// reused by every test prompt they send.
const testSession = "gatehouse-test-prompt"

// TestCommand is the command the test prompt asks to run. Nothing runs it: no agent
// waits on the prompt.
const TestCommand = "echo 'Hello from Gatehouse'"

// Service builds the onboarding.
type Service struct {
	Sessions *sessions.Service
	Elicit   *elicit.Service
	Agents   *agents.Registry
}

// Setup is one agent's connect command.
type Setup struct {
	Vendor, Command string
}

// SetupCommands are the commands that connect each agent of the registry to base
// (this server's URL): `gatehouse setup <agent> --install` for one that installs
// settings, its own command for a bridged one that has one (agents.Connector).
func (s *Service) SetupCommands(base string) []Setup {
	var out []Setup
	for _, a := range s.Agents.All() {
		if c, ok := a.(agents.Connector); ok {
			out = append(out, Setup{Vendor: a.Vendor(), Command: c.ConnectCommand(base)})
			continue
		}
		_, err := a.Settings(models.SettingsOptions{URL: base, Command: "gatehouse", Wait: time.Hour})
		if errors.Is(err, models.ErrNoSettings) {
			continue
		}
		out = append(out, Setup{Vendor: a.Vendor(), Command: fmt.Sprintf("gatehouse setup %s --install --url %s", a.Name(), base)})
	}
	return out
}

// SendTestPrompt opens a test prompt for user in their test session and returns the
// session and prompt ids (for the approval page's link).
func (s *Service) SendTestPrompt(ctx context.Context, user string) (sid, eid string, err error) {
	claude, ok := s.Agents.Lookup("claude")
	if !ok {
		return "", "", errors.New("onboard: the registry has no Claude Code agent")
	}
	payload, _ := json.Marshal(map[string]any{
		"session_id": testSession, "hook_event_name": "PermissionRequest", "cwd": "/",
		"tool_name": "Bash", "tool_input": map[string]any{"command": TestCommand,
			"description": "A test prompt from Gatehouse: approving it runs nothing"},
	})
	req, err := claude.Decode("PermissionRequest", payload)
	if err != nil {
		return "", "", fmt.Errorf("onboard: decode the test payload: %w", err)
	}
	sess, err := s.Sessions.FindOrCreateExternal(ctx, user, testSession, claude.Vendor(), "Test prompt")
	if err != nil {
		return "", "", err
	}
	row, err := s.Elicit.Open(ctx, elicit.Prompt{Session: sess, Origin: req.Origin, Params: req.Params, Person: user})
	if err != nil {
		return "", "", err
	}
	return sess.ID, row.ID, nil
}
