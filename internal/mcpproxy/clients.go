package mcpproxy

import (
	"sync"

	"github.com/gatehouse-dev/gatehouse/internal/adapters/mcp"
)

// maxVerifiedClients bounds the Mcp-Session-Ids remembered as verified; when full, the
// memory starts over (a forgotten id is only verified again).
const maxVerifiedClients = 4096

// verifiedClients remembers what the Mcp-Session-Ids already verified said: a client
// sends its id with every call, and checking the signature and decoding the id again
// each time cost more than the rest of a passed-through call's own work. An id never
// changes meaning (the signer's key lives as long as the process), so what it said
// once it says for good.
type verifiedClients struct {
	mu sync.Mutex
	m  map[string]verifiedClient
}

type verifiedClient struct {
	sid    string
	client mcp.Client
}

// verify is signer.VerifyClient(token, sid), remembered.
func (v *verifiedClients) verify(signer *mcp.StateSigner, token, sid string) (mcp.Client, error) {
	v.mu.Lock()
	got, ok := v.m[token]
	v.mu.Unlock()
	if ok && got.sid == sid {
		return copyClient(got.client), nil
	}
	c, err := signer.VerifyClient(token, sid)
	if err != nil {
		return mcp.Client{}, err
	}
	v.mu.Lock()
	if v.m == nil || len(v.m) >= maxVerifiedClients {
		v.m = make(map[string]verifiedClient)
	}
	v.m[token] = verifiedClient{sid: sid, client: copyClient(c)}
	v.mu.Unlock()
	return c, nil
}

// copyClient keeps the remembered capabilities apart from the caller's.
func copyClient(c mcp.Client) mcp.Client {
	if c.Elicitation != nil {
		e := *c.Elicitation
		c.Elicitation = &e
	}
	return c
}
