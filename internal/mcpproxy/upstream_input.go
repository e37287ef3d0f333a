package mcpproxy

import (
	"context"
	"encoding/json"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gatehouse-dev/gatehouse/internal/adapters/mcp"
	"github.com/gatehouse-dev/gatehouse/internal/elicit"
	"github.com/gatehouse-dev/gatehouse/internal/ids"
	"github.com/gatehouse-dev/gatehouse/models"
)

// UpstreamInput answers an upstream MCP server's elicitation/create during a call: it
// parks (through the park use case) an mcp_input prompt on the session (mirrored to its ancestors) with the
// server's message and schema, waits up to InputTimeout, and returns the person's
// answer; no answer is a decline. It is the upstream pool's Elicit callback; the wait
// is one of starter's parked requests (who started the server's process).
func (p *Proxy) UpstreamInput(ctx context.Context, sid, starter, server, tool string, params *sdk.ElicitParams) (*sdk.ElicitResult, error) {
	sess, err := p.elicit.Session(ctx, sid)
	if err != nil {
		return nil, err
	}
	var asked map[string]any
	raw, _ := json.Marshal(params)
	_ = json.Unmarshal(raw, &asked)
	name := server
	if tool != "" {
		name = server + "__" + tool
	}
	pk, err := p.parkInput(ctx, elicit.Prompt{Session: sess, Origin: models.OriginMCPInput,
		Params: mcp.InputPromptParams(ids.New("input_"), name, asked), Timeout: p.o.InputTimeout}, starter)
	if err != nil {
		return nil, err
	}
	resp, err := awaitInput(ctx, pk)
	if err != nil {
		return nil, err
	}
	return &sdk.ElicitResult{Action: resp.Action, Content: resp.Content}, nil
}
