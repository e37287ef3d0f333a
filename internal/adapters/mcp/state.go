package mcp

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strings"
	"time"
)

// State is what a requestState binds: the approval prompt, the session it belongs
// to, the exact call it approves, and how long the state is good for.
type State struct {
	SessionID     string `json:"s"`
	ElicitationID string `json:"e"`
	Tool          string `json:"t"`
	// ArgsHash is ArgumentsHash of the call's arguments.
	ArgsHash string `json:"a"`
	// Expires is a Unix time in seconds.
	Expires int64 `json:"x"`
}

// statePrefix versions the format so a future change can refuse old states cleanly.
const statePrefix = "gh1."

// b64 is strict so each state has exactly one accepted spelling (no malleable padding
// bits).
func b64() *base64.Encoding { return base64.RawURLEncoding.Strict() }

// Errors of Verify. Each means "do not run the tool".
var (
	ErrStateMalformed = errors.New("requestState is not one Gatehouse issued")
	ErrStateForged    = errors.New("requestState signature does not match")
	ErrStateExpired   = errors.New("requestState has expired")
)

// StateSigner signs and verifies requestState. MCP clients echo the state back byte
// for byte; everything in it is attacker-controlled until the MAC checks out.
type StateSigner struct {
	key []byte
}

// NewStateSigner derives the signing key from the server secret (--session-secret),
// so the key differs from the one used for browser cookies.
func NewStateSigner(secret string) *StateSigner {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte("gatehouse/mcp/requestState/v1"))
	return &StateSigner{key: m.Sum(nil)}
}

// Sign encodes and MACs a state.
func (s *StateSigner) Sign(st State) string {
	payload, _ := json.Marshal(st)
	return s.seal(statePrefix, payload)
}

// seal writes prefix + base64(payload) + "." + base64(MAC of everything before the dot).
func (s *StateSigner) seal(prefix string, payload []byte) string {
	body := prefix + b64().EncodeToString(payload)
	return body + "." + b64().EncodeToString(s.mac(body))
}

// open checks a sealed token's prefix, size and MAC (in constant time) and returns its
// payload. Only the canonical encoding is accepted: the decoder would skip line breaks,
// and one token must not verify under many spellings.
func (s *StateSigner) open(token, prefix string, maxLen int) ([]byte, error) {
	if !strings.HasPrefix(token, prefix) || len(token) > maxLen {
		return nil, ErrStateMalformed
	}
	dot := strings.LastIndexByte(token, '.')
	if dot <= len(prefix) {
		return nil, ErrStateMalformed
	}
	body, sig := token[:dot], token[dot+1:]
	got, err := b64().DecodeString(sig)
	if err != nil || b64().EncodeToString(got) != sig {
		return nil, ErrStateMalformed
	}
	if !hmac.Equal(got, s.mac(body)) {
		return nil, ErrStateForged
	}
	payload, err := b64().DecodeString(body[len(prefix):])
	if err != nil {
		return nil, ErrStateMalformed
	}
	return payload, nil
}

func (s *StateSigner) mac(body string) []byte {
	m := hmac.New(sha256.New, s.key)
	m.Write([]byte(body))
	return m.Sum(nil)
}

// Verify checks the MAC (in constant time) and the expiry, and returns the state.
func (s *StateSigner) Verify(token string, now time.Time) (State, error) {
	payload, err := s.open(token, statePrefix, 4096)
	if err != nil {
		return State{}, err
	}
	var st State
	if err := json.Unmarshal(payload, &st); err != nil {
		return State{}, ErrStateMalformed
	}
	if now.Unix() > st.Expires {
		return State{}, ErrStateExpired
	}
	return st, nil
}

// ArgumentsHash is a hex SHA-256 over the canonical JSON of a call's arguments
// (object keys sorted, insignificant whitespace dropped, number literals kept), so
// a retry approves exactly the arguments the person saw.
func ArgumentsHash(args json.RawMessage) string {
	canon := canonicalJSON(args)
	sum := sha256.Sum256(canon)
	return hex.EncodeToString(sum[:])
}

func canonicalJSON(raw json.RawMessage) []byte {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil || v == nil {
		return []byte("{}")
	}
	out, err := json.Marshal(v) // maps marshal with sorted keys
	if err != nil {
		return []byte("{}")
	}
	return out
}

// clientPrefix marks an Mcp-Session-Id. The prefix is inside the MAC'd body, so a
// requestState can never pass as a client token or the other way round.
const clientPrefix = "ghc1."

// clientToken is what an Mcp-Session-Id carries: the client as initialize described
// it, bound to the Gatehouse session, plus a random nonce so each handshake gets its
// own id.
type clientToken struct {
	Client
	SessionID string `json:"s"`
	Nonce     string `json:"n"`
}

// SignClient issues the Mcp-Session-Id of a client that initialized on session sid.
// The proxy keeps no MCP sessions: the id itself remembers what initialize said, so
// every replica, and this one after a restart, knows the client on its next request.
func (s *StateSigner) SignClient(sid string, c Client, nonce string) string {
	payload, _ := json.Marshal(clientToken{Client: c, SessionID: sid, Nonce: nonce})
	return s.seal(clientPrefix, payload)
}

// VerifyClient checks an Mcp-Session-Id issued by SignClient for session sid.
func (s *StateSigner) VerifyClient(token, sid string) (Client, error) {
	payload, err := s.open(token, clientPrefix, 1024)
	if err != nil {
		return Client{}, err
	}
	var ct clientToken
	if err := json.Unmarshal(payload, &ct); err != nil || ct.SessionID != sid {
		return Client{}, ErrStateMalformed
	}
	return ct.Client, nil
}
