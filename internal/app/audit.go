package app

import (
	"context"
	"log/slog"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/audit"
	"github.com/gatehouse-dev/gatehouse/internal/config"
	"github.com/gatehouse-dev/gatehouse/internal/store"
)

// backfillChain chains the decided prompts from before the audit chain began (older
// versions), and says so: how many it chained, and how many decided prompts it would
// not chain because they were decided after the chain began (edited and unchained, or
// decided by a replica that does not chain) — `gatehouse audit verify` names those.
func backfillChain(ctx context.Context, st *store.Store, log *slog.Logger) error {
	res, err := st.ChainUnchained(ctx)
	if err != nil {
		return err
	}
	if res.Chained > 0 {
		log.Warn("audit chain: chained decisions made before the chain began, marked backfilled", "count", res.Chained)
	}
	if res.Refused > 0 {
		log.Warn("audit chain: decided prompts are missing from the chain and were decided after it began; not chained — run gatehouse audit verify",
			"count", res.Refused)
	}
	return nil
}

// newCheckpointer builds the daily signed checkpoint of the audit chain's head, keyed
// from the server's secret, takes today's if nobody has, and logs the public key
// verifiers need.
func newCheckpointer(ctx context.Context, cfg *config.Config, st *store.Store, secret string, log *slog.Logger) *audit.Checkpointer {
	signer := audit.NewSigner([]byte(secret))
	log.Info("audit checkpoints are signed with this Ed25519 key (gatehouse audit verify --checkpoint-key)", "key", signer.PublicKey())
	if cfg.SessionSecret == "" {
		log.Warn("no --session-secret set: audit checkpoints are signed with a key derived from the secret kept in the database, " +
			"so whoever can write the database can forge them; set --session-secret to keep the key out of it")
	}
	cp := audit.NewCheckpointer(st, signer, time.Now, log, cfg.AuditCheckpointFile)
	if _, err := cp.Tick(ctx); err != nil {
		log.Warn("audit checkpoint", "err", err)
	}
	return cp
}

// checkpointDaily takes the day's audit checkpoint on the first tick of each UTC day
// (the first replica to get there takes it) until ctx ends.
func (a *App) checkpointDaily(ctx context.Context) {
	t := time.NewTicker(time.Minute)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if _, err := a.checkpoints.Tick(ctx); err != nil && ctx.Err() == nil {
			a.Log.Warn("audit checkpoint", "err", err)
		}
	}
}
