// Package apiclient is the JSON API as a person's terminal uses it (`gatehouse
// pending`, `approve`, `reject`): the prompts waiting for them and their verdicts. It
// speaks only the public API, so it works against any Gatehouse the person can reach
// with a token.
package apiclient

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"time"
)

// Client calls one Gatehouse server.
type Client struct {
	// Base is the server's URL, without a trailing slash.
	Base string
	// Token, when set, is sent as `Authorization: Bearer <Token>`.
	Token string
	HTTP  *http.Client
}

// Pending is one prompt waiting for a decision.
type Pending struct {
	SessionID, ID string
	Session       string // the session's title
	Message       string // what it asks: the command, else the tool call, else the message
	Risk          string // the risk level ("" when the server rates none)
	Agent         string // who asks: the agent's vendor, e.g. Claude Code ("" when unknown)
}

// Pending lists every prompt waiting in the sessions the caller can see, oldest first.
func (c *Client) Pending(ctx context.Context) ([]Pending, error) {
	var list struct {
		Sessions []struct {
			ID     string  `json:"id"`
			Title  string  `json:"title"`
			Parent *string `json:"parent_session_id"`
			Count  int     `json:"pending_elicitations_count"`
		} `json:"sessions"`
	}
	if err := c.do(ctx, http.MethodGet, "/v1/sessions", nil, &list); err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var out []Pending
	for _, s := range list.Sessions {
		if s.Count == 0 {
			continue
		}
		var sess struct {
			Pending []struct {
				ID     string         `json:"elicitation_id"`
				Params map[string]any `json:"params"`
				Risk   struct {
					Level string `json:"level"`
				} `json:"risk"`
			} `json:"pending_elicitations"`
		}
		if err := c.do(ctx, http.MethodGet, "/v1/sessions/"+s.ID, nil, &sess); err != nil {
			return nil, err
		}
		for _, p := range sess.Pending {
			if seen[p.ID] {
				continue
			}
			seen[p.ID] = true
			owner := s.ID
			if t, ok := p.Params["target_session_id"].(string); ok && t != "" {
				owner = t
			}
			out = append(out, Pending{SessionID: owner, ID: p.ID, Session: s.Title, Message: summary(p.Params),
				Risk: p.Risk.Level, Agent: str(p.Params["vendor"])})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// summary is what a prompt asks, on one line's worth: the shell command it would run,
// else its content preview (the tool and its input), else its message.
func summary(params map[string]any) string {
	if cmd := command(params); cmd != "" {
		return cmd
	}
	if p := str(params["content_preview"]); p != "" {
		return p
	}
	return str(params["message"])
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

// command is the shell command a prompt asks to run, when it is one.
func command(params map[string]any) string {
	for _, key := range []string{"tool_input", "input"} {
		if in, ok := params[key].(map[string]any); ok {
			if cmd, ok := in["command"].(string); ok {
				return cmd
			}
		}
	}
	return ""
}

// Find is the pending prompt with id (or the only one whose id starts with it).
func (c *Client) Find(ctx context.Context, id string) (*Pending, error) {
	list, err := c.Pending(ctx)
	if err != nil {
		return nil, err
	}
	var found []Pending
	for _, p := range list {
		if p.ID == id {
			return &p, nil
		}
		if strings.HasPrefix(p.ID, id) {
			found = append(found, p)
		}
	}
	switch len(found) {
	case 1:
		return &found[0], nil
	case 0:
		return nil, fmt.Errorf("no pending request %q (gatehouse pending lists them)", id)
	}
	return nil, fmt.Errorf("%q names %d pending requests: give more of the id", id, len(found))
}

// Resolve gives the verdict action ("accept" or "decline") on a prompt; a reason goes
// to the agent with a decline. It returns the outcome: "resolved", or
// "already_resolved" with who decided first.
func (c *Client) Resolve(ctx context.Context, sid, eid, action, reason string) (outcome, by string, err error) {
	body := map[string]any{"action": action}
	if reason != "" {
		body["content"] = map[string]any{"feedback": reason}
	}
	var out struct {
		Outcome    string `json:"outcome"`
		ResolvedBy string `json:"resolved_by"`
	}
	err = c.do(ctx, http.MethodPost, "/v1/sessions/"+sid+"/elicitations/"+eid+"/resolve", body, &out)
	return out.Outcome, out.ResolvedBy, err
}

// Error is an API error answer.
type Error struct {
	Status  int
	Code    string
	Message string
}

func (e *Error) Error() string {
	if e.Message == "" {
		return fmt.Sprintf("the server answered %d", e.Status)
	}
	return fmt.Sprintf("%s (%d %s)", e.Message, e.Status, e.Code)
}

func (c *Client) do(ctx context.Context, method, path string, body, out any) error {
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.Base+path, r)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	hc := c.HTTP
	if hc == nil {
		hc = &http.Client{Timeout: 30 * time.Second}
	}
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		return errorOf(resp)
	}
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return err
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(raw, out)
}
