package elicit_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/gatehouse-dev/gatehouse/internal/auth"
	"github.com/gatehouse-dev/gatehouse/internal/elicit"
	"github.com/gatehouse-dev/gatehouse/internal/errs"
	"github.com/gatehouse-dev/gatehouse/internal/stream"
	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
	"github.com/gatehouse-dev/gatehouse/models"
)

// TestResolveRefusesNULContent: a verdict whose content holds U+0000 — as a form post
// from the approval page can — is a ValidationError from the one resolver on every
// database, and the prompt stays pending for a proper verdict. (Postgres cannot store
// NUL: without the check the same verdict was a 500 there and stored on SQLite.)
func TestResolveRefusesNULContent(t *testing.T) {
	ctx := context.Background()
	urls := []string{"sqlite://" + filepath.Join(t.TempDir(), "g.db")}
	if os.Getenv(testserver.PostgresEnv) != "" {
		urls = append(urls, testserver.Databases(t)[1].NewURL(t))
	}
	for _, url := range urls {
		st := testserver.OpenStore(t, url)
		sess := newSession(t, st, "")
		core := elicit.New(st, stream.NewLocal(), elicit.Options{Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
		row, err := core.Open(ctx, elicit.Prompt{Session: sess, Origin: models.OriginClaudePermission, Params: map[string]any{"message": "m"}})
		if err != nil {
			t.Fatal(err)
		}
		for _, content := range []map[string]any{
			{"feedback": "use\x00stash"},
			{"picked": []string{"a", "b\x00"}},
			{"k\x00": "v"},
		} {
			_, err := core.Resolve(ctx, sess.ID, row.ID, models.Verdict{Action: models.ActionDecline, Content: content}, auth.LocalUser, models.ViaPage)
			var ve *errs.ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("%s: content %q: err = %v, want a ValidationError", url[:6], content, err)
			}
		}
		out, err := core.Resolve(ctx, sess.ID, row.ID, models.Verdict{Action: models.ActionDecline,
			Content: map[string]any{"feedback": `a \u0000 is text here`}}, auth.LocalUser, models.ViaPage)
		if err != nil || out.Outcome != elicit.OutcomeResolved {
			t.Fatalf("%s: proper verdict after the refused ones: %+v %v", url[:6], out, err)
		}
	}
}
