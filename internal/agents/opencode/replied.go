package opencode

import (
	"encoding/json"
	"errors"
	"strings"

	"github.com/gatehouse-dev/gatehouse/internal/agents/hookkit"
)

// Replied is a permission.replied event's properties: OpenCode settled a request
// (whoever answered it).
type Replied struct {
	SessionID string `json:"sessionID"`
	RequestID string `json:"requestID"`
	Reply     string `json:"reply"`
	// RootSessionID is the top-level session of a sub-agent's session, as for Payload.
	RootSessionID string `json:"rootSessionID"`
}

// isReplied reports whether body is a permission.replied event or its properties
// (it names a requestID, which a request does not).
func isReplied(body []byte) bool {
	var probe struct {
		Type      string  `json:"type"`
		RequestID *string `json:"requestID"`
	}
	if json.Unmarshal(body, &probe) != nil {
		return false
	}
	return probe.Type == EventReplied || (probe.Type == "" && probe.RequestID != nil)
}

// DecodeReplied reads a permission.replied event or its properties: sessionID and
// requestID are required.
func DecodeReplied(body []byte) (*Replied, error) {
	body, err := properties(body, EventReplied)
	if err != nil {
		return nil, err
	}
	n := &Replied{}
	if err := hookkit.Decode(body, n); err != nil {
		return nil, err
	}
	if strings.TrimSpace(n.SessionID) == "" {
		return nil, errors.New("sessionID is required")
	}
	if strings.TrimSpace(n.RequestID) == "" {
		return nil, errors.New("requestID is required")
	}
	return n, nil
}

// Root is as Payload.Root.
func (n *Replied) Root() (root, subAgent string) {
	if n.RootSessionID == "" || n.RootSessionID == n.SessionID {
		return n.SessionID, ""
	}
	return n.RootSessionID, n.SessionID
}

// Matches reports whether a pending prompt's params are the request n settles.
func (n *Replied) Matches(params map[string]any) bool {
	id, _ := params["opencode_request_id"].(string)
	return id == n.RequestID
}
