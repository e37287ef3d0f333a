package agents

import (
	"github.com/gatehouse-dev/gatehouse/internal/agents/acp"
	"github.com/gatehouse-dev/gatehouse/internal/agents/claude"
	"github.com/gatehouse-dev/gatehouse/internal/agents/codex"
	"github.com/gatehouse-dev/gatehouse/internal/agents/codexcli"
	"github.com/gatehouse-dev/gatehouse/internal/agents/copilot"
	"github.com/gatehouse-dev/gatehouse/internal/agents/cursor"
	"github.com/gatehouse-dev/gatehouse/internal/agents/gemini"
	"github.com/gatehouse-dev/gatehouse/internal/agents/opencode"
)

// Default is every agent Gatehouse knows, one line each.
func Default() *Registry {
	return NewRegistry(
		claude.Agent{},
		codexcli.Agent{},
		codex.AppServer{},
		copilot.Agent{},
		cursor.Agent{},
		acp.Agent{},
		gemini.Agent{},
		opencode.Agent{},
	)
}
