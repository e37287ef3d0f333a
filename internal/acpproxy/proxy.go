// Package acpproxy sits between an editor and an Agent Client Protocol agent (JSON-RPC
// over stdio, one message per line), the engine of `gatehouse acp -- <agent>`. Every
// message passes through untouched except the agent's `session/request_permission`,
// which parks at Gatehouse instead of opening the editor's dialog: the person's
// verdict is the agent's answer. A `session/cancel` from the editor withdraws the
// request's prompt and answers the agent "cancelled", as the protocol asks.
//
// When Gatehouse gives no verdict (unreachable, the wait ended) the request goes on to
// the editor as if Gatehouse were not there, so the person can still answer in the
// editor; with FailClosed it is rejected instead.
package acpproxy

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"sync"

	"github.com/gatehouse-dev/gatehouse/internal/agents/acp"
)

// Forward parks one permission request's params at Gatehouse and returns the answer
// to give the agent (empty: no verdict) or why Gatehouse could not be used.
type Forward func(ctx context.Context, payload []byte) (answer []byte, err error)

// Options configure a proxy.
type Options struct {
	Forward Forward
	// FailClosed rejects a request Gatehouse gave no verdict for, instead of passing
	// it on to the editor.
	FailClosed bool
	// Logf receives notes for stderr (never stdout: that is the editor's channel).
	Logf func(format string, args ...any)
}

// message is the part of a JSON-RPC message the proxy reads.
type message struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
}

// isRequest reports a request (a method and an id); a notification has no id.
func (m *message) isRequest() bool { return m.Method != "" && len(m.ID) > 0 && string(m.ID) != "null" }

// isResponse reports an answer to a request.
func (m *message) isResponse() bool { return m.Method == "" && len(m.ID) > 0 }

// Proxy is one editor ↔ agent relay.
type Proxy struct {
	o Options

	editorMu sync.Mutex
	editor   io.Writer
	agentMu  sync.Mutex
	agent    io.Writer

	mu sync.Mutex
	// cwdOf is each session's working directory; pendingCwd the directory of a
	// session/new the agent has not answered yet, by request id.
	cwdOf      map[string]string
	pendingCwd map[string]string
	// initID is the editor's initialize request, whose answer names the agent.
	initID    string
	agentName string
	// parked are the permission requests waiting at Gatehouse, per session, so a
	// session/cancel can withdraw them.
	parked map[string]map[*parkedRequest]struct{}

	wg sync.WaitGroup
}

type parkedRequest struct {
	cancel    context.CancelFunc
	cancelled bool
}

// New returns a proxy writing to the editor and to the agent.
func New(editor, agent io.Writer, o Options) *Proxy {
	if o.Logf == nil {
		o.Logf = func(string, ...any) {}
	}
	return &Proxy{o: o, editor: editor, agent: agent, cwdOf: map[string]string{}, pendingCwd: map[string]string{},
		parked: map[string]map[*parkedRequest]struct{}{}}
}

// Run relays the editor's input (fromEditor) to the agent and the agent's output
// (fromAgent) to the editor until the agent's output ends: the agent has exited, on
// its own or because closeAgent — called when the editor's input ends — closed its
// input. Parked requests are then abandoned (nobody reads their answers) and Run
// returns once their goroutines have.
func (p *Proxy) Run(ctx context.Context, fromEditor, fromAgent io.Reader, closeAgent func()) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		if err := p.relay(fromEditor, p.fromEditor); err != nil {
			p.o.Logf("gatehouse acp: reading from the editor: %v", err)
		}
		closeAgent()
	}()
	err := p.relay(fromAgent, func(line []byte) error { return p.fromAgent(ctx, line) })
	cancel()
	p.wg.Wait()
	return err
}

// relay reads lines from r and hands each to handle.
func (p *Proxy) relay(r io.Reader, handle func([]byte) error) error {
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			if herr := handle(line); herr != nil {
				return herr
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// fromEditor passes an editor's message to the agent, noting what the proxy needs:
// working directories, the initialize request, and cancels.
func (p *Proxy) fromEditor(line []byte) error {
	var m message
	if json.Unmarshal(line, &m) == nil {
		switch m.Method {
		case "initialize":
			p.mu.Lock()
			p.initID = string(m.ID)
			p.mu.Unlock()
		case "session/new":
			var params struct {
				Cwd string `json:"cwd"`
			}
			_ = json.Unmarshal(m.Params, &params)
			p.mu.Lock()
			p.pendingCwd[string(m.ID)] = params.Cwd
			p.mu.Unlock()
		case "session/load":
			var params struct {
				SessionID string `json:"sessionId"`
				Cwd       string `json:"cwd"`
			}
			_ = json.Unmarshal(m.Params, &params)
			p.mu.Lock()
			p.cwdOf[params.SessionID] = params.Cwd
			p.mu.Unlock()
		case "session/cancel":
			var params struct {
				SessionID string `json:"sessionId"`
			}
			_ = json.Unmarshal(m.Params, &params)
			p.cancelSession(params.SessionID)
		}
	}
	return p.toAgent(line)
}

// fromAgent passes an agent's message to the editor, except a permission request,
// which parks.
func (p *Proxy) fromAgent(ctx context.Context, line []byte) error {
	var m message
	if json.Unmarshal(line, &m) != nil {
		return p.toEditor(line)
	}
	if m.isRequest() && m.Method == acp.Method {
		p.park(ctx, m, line)
		return nil
	}
	if m.isResponse() {
		p.noteAnswer(m)
	}
	return p.toEditor(line)
}

// noteAnswer reads the agent's answers the proxy needs: a new session's id (its
// working directory was in the request) and the agent's name from initialize.
func (p *Proxy) noteAnswer(m message) {
	p.mu.Lock()
	defer p.mu.Unlock()
	id := string(m.ID)
	if cwd, ok := p.pendingCwd[id]; ok {
		delete(p.pendingCwd, id)
		var r struct {
			SessionID string `json:"sessionId"`
		}
		if json.Unmarshal(m.Result, &r) == nil && r.SessionID != "" {
			p.cwdOf[r.SessionID] = cwd
		}
	}
	if id == p.initID && p.initID != "" {
		var r struct {
			AgentInfo struct {
				Name  string `json:"name"`
				Title string `json:"title"`
			} `json:"agentInfo"`
		}
		if json.Unmarshal(m.Result, &r) == nil {
			p.agentName = r.AgentInfo.Title
			if p.agentName == "" {
				p.agentName = r.AgentInfo.Name
			}
		}
	}
}

func (p *Proxy) toAgent(line []byte) error {
	p.agentMu.Lock()
	defer p.agentMu.Unlock()
	_, err := p.agent.Write(line)
	return err
}

func (p *Proxy) toEditor(line []byte) error {
	p.editorMu.Lock()
	defer p.editorMu.Unlock()
	_, err := p.editor.Write(line)
	return err
}
