package store

import (
	"context"
	"path/filepath"
	"testing"
)

// TestTheSQLiteWriterKeepsItsStatementsPrepared: a statement the writer runs is
// prepared once its transaction has ended, and the next transaction runs it prepared.
func TestTheSQLiteWriterKeepsItsStatementsPrepared(t *testing.T) {
	ctx := context.Background()
	s, err := Open("sqlite://" + filepath.Join(t.TempDir(), "g.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Migrate(ctx, nil); err != nil {
		t.Fatal(err)
	}
	const q = "UPDATE audit_head SET seq = seq WHERE id = ?"
	prepared := func() bool {
		var used bool
		if err := s.writeSQL(ctx, func(tx sqlTx) error {
			used = tx.stmt(q) != nil
			_, err := tx.exec(q, 1)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return used
	}
	if prepared() {
		t.Fatal("a statement never run before was prepared")
	}
	if !prepared() {
		t.Fatal("the statement run in the last transaction was not run prepared in the next")
	}
}
