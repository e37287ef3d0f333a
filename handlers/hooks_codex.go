package handlers

import (
	"context"
	"errors"

	"github.com/labstack/echo/v4"

	"github.com/gatehouse-dev/gatehouse/internal/agents/codex"
	"github.com/gatehouse-dev/gatehouse/internal/auth"
	"github.com/gatehouse-dev/gatehouse/internal/elicit"
	"github.com/gatehouse-dev/gatehouse/internal/errs"
	"github.com/gatehouse-dev/gatehouse/internal/ids"
	"github.com/gatehouse-dev/gatehouse/internal/rules"
	"github.com/gatehouse-dev/gatehouse/models"
)

// codexFingerprintKey is the param holding the hash of the Codex request a prompt was
// opened for (see checkCodexRetry).
const codexFingerprintKey = "codex_fingerprint"

// codexElicitationRequest parks a request the Codex app-server sent to its client
// (§6.2), forwarded verbatim as {"id","method","params"}, and answers with the JSON-RPC
// result for Codex. The prompt id is deterministic (elicit_codex_ + sha256 of
// {method, request_id, session_id}), so a bridge that retries the same request
// re-attaches to the same prompt and, when it was decided meanwhile, gets the verdict
// at once. A decline also interrupts the turn through the runner, when one is set.
func (s *Server) codexElicitationRequest(c echo.Context) error {
	return s.parkHook(c, func(c echo.Context) (*hookPark, error) { return s.prepareCodex(c) })
}

func (s *Server) prepareCodex(c echo.Context) (*hookPark, error) {
	ctx := c.Request().Context()
	sess, level, err := s.sessions.AuthorizeLevel(ctx, userOf(c), c.Param("sid"), auth.Read)
	if err != nil {
		return nil, err
	}
	body, err := readBody(c)
	if err != nil {
		return nil, err
	}
	if n, ok, err := codex.DecodeResolved(body); ok {
		if err != nil {
			return nil, bad("", "%s", err.Error())
		}
		if level < auth.Edit {
			return nil, errs.Forbidden("retiring prompts needs edit access to the session")
		}
		retired, err := s.retireCodexPrompts(ctx, sess, n, hooksTokenOf(c))
		if err != nil {
			return nil, err
		}
		return &hookPark{immediate: map[string]any{"retired": retired}}, nil
	}
	req, err := codex.Decode(body)
	if err != nil {
		return nil, bad("", "%s", err.Error())
	}
	eid := ids.Deterministic(codex.IDPrefix, req.CanonicalKey(sess.ID))
	params := req.PromptParams()
	params[codexFingerprintKey] = req.Fingerprint()
	if req.Method == codex.MethodMCPElicitation {
		params = withPropertyOrder(params, rawRequestedSchema(body))
	}
	if level.CanPark() {
		if err := s.checkCodexRetry(ctx, sess, eid, req.Fingerprint()); err != nil {
			return nil, err
		}
	}
	h := &hookPark{level: level, prompt: elicit.Prompt{Session: sess, ID: eid, Origin: models.OriginCodex, Params: params},
		// The app-server's answers have no place for a message: a decline is
		// {"decision":"decline"} (or its method's equivalent) and nothing else.
		answer: func(r elicit.Result, _ string) any {
			if r.Action == elicit.ActionDecline {
				s.forwardToRunner(sess, map[string]any{"type": "interrupt"})
			}
			return req.Answer(codex.Verdict{Action: r.Action, Content: r.Content})
		}}
	if cmd, ok := params["command"].(string); ok && cmd != "" {
		// Codex command approvals are the tool "shell" to rules; the pattern sees the
		// command line as Codex shows it.
		cwd, _ := params["cwd"].(string)
		h.subject = &rules.Subject{Tool: codexShellTool, Input: map[string]any{"command": cmd}, Cwd: cwd}
	}
	return h, nil
}

// codexShellTool is the tool name rules use for Codex command approvals.
const codexShellTool = "shell"

// checkCodexRetry refuses (409) to re-attach a request to a prompt that was opened for
// a different request under the same JSON-RPC id — an app-server that restarted its id
// counter, say. Re-attaching would hand one command's verdict to another.
func (s *Server) checkCodexRetry(ctx context.Context, sess *models.Session, eid, fingerprint string) error {
	row, err := s.elicit.GetInSession(ctx, sess.ID, eid)
	if errors.Is(err, errs.ErrNotFound) {
		return nil // nothing to re-attach to here (another session's id: elicit.Open answers 400)
	}
	if err != nil {
		return err
	}
	if stored := row.DecodeParams().CodexFingerprint; stored != "" && stored != fingerprint {
		s.log.Warn("codex request id reused for a different request", "session_id", sess.ID, "elicitation_id", eid)
		return errs.Conflict("request id was already used in this session by a different request; " +
			"send each request under a fresh id (or a new session per app-server connection)")
	}
	return nil
}

// retireCodexPrompts cancels this session's pending prompts for a request Codex says
// was settled elsewhere (serverRequest/resolved). The bridge's parked request for it
// then answers "cancel", which Codex no longer reads; the prompt leaves every inbox.
// only, when set, is the hooks-only token asking: it retires only what it parked.
func (s *Server) retireCodexPrompts(ctx context.Context, sess *models.Session, n *codex.Resolved, only string) ([]string, error) {
	_, rows, err := s.elicit.PendingFor(ctx, sess)
	if err != nil {
		return nil, err
	}
	retired := []string{}
	for _, row := range rows {
		if row.SessionID != sess.ID || row.Origin != models.OriginCodex || (only != "" && !row.ParkedWith(only)) {
			continue // a hooks-only token retires only what it parked
		}
		if !n.Matches(row.DecodeParams().All) {
			continue
		}
		out, err := s.elicit.Resolve(ctx, sess.ID, row.ID, elicit.Result{Action: elicit.ActionCancel}, "codex", models.ViaEvent)
		if err != nil {
			return nil, err
		}
		if out.Outcome == elicit.OutcomeResolved {
			retired = append(retired, row.ID)
		}
	}
	return retired, nil
}
