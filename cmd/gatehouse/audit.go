package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/gatehouse-dev/gatehouse/internal/audit"
	"github.com/gatehouse-dev/gatehouse/internal/store"
)

// Exit codes of `gatehouse audit verify`.
const (
	exitChainHolds  = 0
	exitChainBroken = 1
	exitCannotCheck = 2
)

// runAudit is `gatehouse audit verify [--database-url URL]`: it recomputes the whole
// hash chain from the stored rows (read-only) and exits 0 when it holds, 1 naming the
// first row that does not match, 2 when it could not check (bad usage, no database).
func runAudit(args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] != "verify" {
		fmt.Fprintln(stderr, "usage: gatehouse audit verify [--database-url URL]")
		return exitCannotCheck
	}
	fs := flag.NewFlagSet("gatehouse audit verify", flag.ContinueOnError)
	fs.SetOutput(stderr)
	def := getenv("GATEHOUSE_DATABASE_URL")
	if def == "" {
		def = "sqlite://./data/gatehouse.db"
	}
	dbURL := fs.String("database-url", def, "sqlite://PATH or postgres://… (env GATEHOUSE_DATABASE_URL)")
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitChainHolds
		}
		return exitCannotCheck
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "gatehouse audit verify: unexpected argument %q\n", fs.Arg(0))
		return exitCannotCheck
	}
	if path, ok := strings.CutPrefix(*dbURL, "sqlite://"); ok {
		// Verifying must not create an empty database where the real one was expected.
		if _, err := os.Stat(path); err != nil {
			fmt.Fprintln(stderr, "gatehouse audit verify:", err)
			return exitCannotCheck
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	st, err := store.Open(*dbURL)
	if err != nil {
		fmt.Fprintln(stderr, "gatehouse audit verify:", err)
		return exitCannotCheck
	}
	defer st.Close()
	res, err := audit.Verify(ctx, st)
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
	return exitChainHolds
}
