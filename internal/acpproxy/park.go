package acpproxy

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/gatehouse-dev/gatehouse/internal/agents/acp"
)

// cancelled is the outcome the protocol asks for after a session/cancel.
var cancelled = json.RawMessage(`{"outcome":{"outcome":"cancelled"}}`)

// park sends a permission request to Gatehouse on its own goroutine and answers the
// agent with the verdict; without one it passes the request on to the editor (or,
// failing closed, rejects it).
func (p *Proxy) park(ctx context.Context, m message, line []byte) {
	var params map[string]any
	_ = json.Unmarshal(m.Params, &params)
	if params == nil {
		params = map[string]any{}
	}
	sid, _ := params["sessionId"].(string)
	p.mu.Lock()
	params["cwd"], params["agent"] = p.cwdOf[sid], p.agentName
	p.mu.Unlock()
	payload, _ := json.Marshal(params)

	ctx, cancel := context.WithCancel(ctx)
	req := &parkedRequest{cancel: cancel}
	p.track(sid, req, true)
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		defer cancel()
		answer, err := p.o.Forward(ctx, payload)
		p.track(sid, req, false)
		p.mu.Lock()
		withdrawn := req.cancelled
		p.mu.Unlock()
		switch {
		case withdrawn:
			p.reply(m.ID, cancelled)
		case err == nil && len(answer) > 0:
			p.reply(m.ID, answer)
		case ctx.Err() != nil:
			// The agent is gone; nobody reads an answer.
		case p.o.FailClosed:
			p.o.Logf("gatehouse acp: %s; rejected (--fail-closed)", why(err))
			if deny, ok := (acp.Agent{}).Deny(payload, ""); ok {
				p.reply(m.ID, deny)
				return
			}
			p.reply(m.ID, cancelled)
		default:
			p.o.Logf("gatehouse acp: %s; the editor asks instead", why(err))
			_ = p.toEditor(line)
		}
	}()
}

func why(err error) string {
	if err != nil {
		return strings.TrimSpace(err.Error())
	}
	return "Gatehouse gave no verdict"
}

// track adds (or removes) a parked request of session sid.
func (p *Proxy) track(sid string, r *parkedRequest, add bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	set := p.parked[sid]
	if add {
		if set == nil {
			set = map[*parkedRequest]struct{}{}
			p.parked[sid] = set
		}
		set[r] = struct{}{}
		return
	}
	delete(set, r)
	if len(set) == 0 {
		delete(p.parked, sid)
	}
}

// cancelSession withdraws every parked request of session sid: the request to
// Gatehouse ends (so its prompt is withdrawn) and the agent is answered "cancelled".
func (p *Proxy) cancelSession(sid string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for r := range p.parked[sid] {
		r.cancelled = true
		r.cancel()
	}
}

// reply answers the agent's request id with result.
func (p *Proxy) reply(id json.RawMessage, result json.RawMessage) {
	line, err := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Result  json.RawMessage `json:"result"`
	}{"2.0", id, result})
	if err != nil {
		return
	}
	if err := p.toAgent(append(line, '\n')); err != nil {
		p.o.Logf("gatehouse acp: answering the agent: %v", err)
	}
}
