package main

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/gatehouse-dev/gatehouse/internal/audit"
	"github.com/gatehouse-dev/gatehouse/internal/store"
)

// Exit codes of `gatehouse audit verify`.
const (
	exitChainHolds  = 0
	exitChainBroken = 1
	exitCannotCheck = 2
)

// auditUsage is the subcommand's synopsis.
const auditUsage = "usage: gatehouse audit verify [--database-url URL] [--head [SEQ:]HASH]... [--checkpoint FILE]... [--checkpoint-key KEY | --session-secret SECRET]"

// newAuditCmd is `gatehouse audit`, whose one check is verify.
func newAuditCmd(c *cli) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "audit verify",
		Short:   "recompute the audit hash chain",
		GroupID: groupServer,
		Args:    cobra.ArbitraryArgs,
		RunE:    func(*cobra.Command, []string) error { return usageErrorf("%s", auditUsage) },
	}
	cmd.AddCommand(newAuditVerifyCmd(c))
	return cmd
}

// newAuditVerifyCmd is `gatehouse audit verify`: it recomputes the whole hash chain
// from the stored rows (read-only) and exits 0 when it holds, 1 naming the first row
// that does not match — or the head or checkpoint kept outside the database that the
// chain no longer reaches (cut short or rewritten) — and 2 when it could not check
// (bad usage, no database, an unreadable checkpoint file, no key to check checkpoints
// with).
func newAuditVerifyCmd(c *cli) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "verify",
		Short: "recompute the audit hash chain and report the first broken link",
		Args:  noArgs,
	}
	fs := cmd.Flags()
	dbURL := fs.String("database-url", firstSet(c.getenv, "sqlite://./data/gatehouse.db", "GATEHOUSE_DATABASE_URL"), "sqlite://PATH or postgres://… (env GATEHOUSE_DATABASE_URL)")
	heads := fs.StringArray("head", nil, "a head recorded earlier, HASH or SEQ:HASH: the chain must still reach it (repeatable)")
	files := fs.StringArray("checkpoint", nil, "a file of signed daily checkpoints (JSON lines, --audit-checkpoint-file): the chain must still reach each (repeatable)")
	keyHex := fs.String("checkpoint-key", "", "the Ed25519 public key checkpoints are signed with (hex; the server logs it at start)")
	secret := fs.String("session-secret", "", "the server's --session-secret, to derive the checkpoint key from instead (env GATEHOUSE_SESSION_SECRET)")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if *secret == "" {
			*secret = c.getenv("GATEHOUSE_SESSION_SECRET") // not a flag default: help would show it
		}
		var anchors []audit.Anchor
		for _, h := range *heads {
			a, err := audit.ParseHead(h)
			if err != nil {
				return usageErrorf("gatehouse audit verify: --head %s: %v", h, err)
			}
			anchors = append(anchors, a)
		}
		return exitCode(verifyAudit(cmd.Context(), *dbURL, anchors, *files, *keyHex, *secret, c.stdout, c.stderr))
	}
	return cmd
}

// verifyAudit checks the chain in the database at dbURL against anchors and the
// checkpoint files, and returns the exit code.
func verifyAudit(ctx context.Context, dbURL string, anchors []audit.Anchor, files []string, keyHex, secret string, stdout, stderr io.Writer) int {
	if len(files) > 0 {
		pub, err := checkpointKey(keyHex, secret)
		if err != nil {
			fmt.Fprintln(stderr, "gatehouse audit verify:", err)
			return exitCannotCheck
		}
		for _, name := range files {
			more, code := readCheckpointFile(name, pub, stdout, stderr)
			if code != exitChainHolds {
				return code
			}
			anchors = append(anchors, more...)
		}
	}
	if path, ok := strings.CutPrefix(dbURL, "sqlite://"); ok {
		// Verifying must not create an empty database where the real one was expected.
		if _, err := os.Stat(path); err != nil {
			fmt.Fprintln(stderr, "gatehouse audit verify:", err)
			return exitCannotCheck
		}
	}
	st, err := store.Open(dbURL)
	if err != nil {
		fmt.Fprintln(stderr, "gatehouse audit verify:", err)
		return exitCannotCheck
	}
	defer st.Close()
	res, err := audit.Verify(ctx, st, anchors...)
	if err != nil {
		fmt.Fprintln(stderr, "gatehouse audit verify: cannot read the chain (is the database migrated?):", err)
		return exitCannotCheck
	}
	if res.Problem != nil {
		fmt.Fprintf(stdout, "audit chain BROKEN at %s\n", res.Problem)
		fmt.Fprintf(stdout, "head seq=%d hash=%s\n", res.HeadSeq, res.HeadHash)
		return exitChainBroken
	}
	fmt.Fprintf(stdout, "audit chain holds: %d rows, head seq=%d hash=%s\n", res.Rows, res.HeadSeq, res.HeadHash)
	if res.Backfilled > 0 {
		fmt.Fprintf(stdout, "%d rows were backfilled (decided before the chain began)\n", res.Backfilled)
	}
	if len(anchors) > 0 {
		fmt.Fprintf(stdout, "it reaches all %d heads and checkpoints given\n", len(anchors))
	}
	return exitChainHolds
}

// checkpointKey is the key checkpoints are checked with: --checkpoint-key, else the one
// derived from the server's secret.
func checkpointKey(keyHex, secret string) (ed25519.PublicKey, error) {
	if keyHex != "" {
		return audit.ParsePublicKey(keyHex)
	}
	if secret == "" {
		return nil, errors.New("--checkpoint needs the key it was signed with: --checkpoint-key (the key the server logs at start) or --session-secret / GATEHOUSE_SESSION_SECRET")
	}
	return audit.ParsePublicKey(audit.NewSigner([]byte(secret)).PublicKey())
}

// readCheckpointFile reads and checks the signatures of a checkpoint file. A file that
// cannot be read is exit 2; a checkpoint whose signature does not verify is exit 1
// (someone changed the file, or it is not this server's).
func readCheckpointFile(name string, pub ed25519.PublicKey, stdout, stderr io.Writer) ([]audit.Anchor, int) {
	f, err := os.Open(name)
	if err != nil {
		fmt.Fprintln(stderr, "gatehouse audit verify:", err)
		return nil, exitCannotCheck
	}
	defer f.Close()
	cps, err := audit.ReadCheckpoints(f)
	if err != nil {
		fmt.Fprintf(stderr, "gatehouse audit verify: %s: %v\n", name, err)
		return nil, exitCannotCheck
	}
	anchors, err := audit.Anchors(cps, pub, name)
	if err != nil {
		fmt.Fprintf(stdout, "audit checkpoint REJECTED: %v\n", err)
		return nil, exitChainBroken
	}
	return anchors, exitChainHolds
}
