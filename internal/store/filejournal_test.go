package store

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/models"
)

// journalRows are n rule answers as DecideByRule journals them, every optional column
// set on the odd ones and none on the even ones.
func journalRows(prefix string, n, paramsSize int) []*models.Elicitation {
	now := time.Now().UTC().Truncate(time.Microsecond)
	rows := make([]*models.Elicitation, n)
	for i := range rows {
		params, _ := json.Marshal(map[string]any{"message": strings.Repeat("x", paramsSize), "i": i})
		e := &models.Elicitation{ID: fmt.Sprintf("elicit_%s%05d", prefix, i), SessionID: "conv_1", Origin: "claude.permission",
			Params: params, Status: models.StatusResolved, CreatedAt: now, ExpiresAt: now.Add(time.Hour),
			Logged: models.LoggedResolved, Notified: models.NotifiedAll}
		if i%2 == 1 {
			action, by, via, key, rule, token := models.ActionAccept, "ann", models.ViaRule, "call-1", "rule_1", "tok_1"
			later := now.Add(time.Second)
			e.Action, e.ResolvedBy, e.ResolvedVia, e.ResolvedAt = &action, &by, &via, &now
			e.Content = json.RawMessage(`{"ok":true}`)
			e.ConsumedAt, e.LeaseUntil = &later, &later
			e.CallKey, e.RuleID, e.TokenID = &key, &rule, &token
		}
		rows[i] = e
	}
	return rows
}

func segmentFiles(t *testing.T, j *fileJournal) []string {
	t.Helper()
	names, err := filepath.Glob(j.base + "-*.log")
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// TestJournalRecordsOutliveTheProcessUntilForgotten: what one process journals and
// does not forget, the next reads back exactly (every column); what it forgets leaves
// no file behind; and a second process cannot write the journal while one holds it.
func TestJournalRecordsOutliveTheProcessUntilForgotten(t *testing.T) {
	path := filepath.Join(t.TempDir(), "g.db")
	j := newFileJournal(path)
	rows := journalRows("a", 6, 10)
	at, err := j.Append(rows, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	other := newFileJournal(path)
	if _, err := other.Append(rows[:1], time.Now()); !errors.Is(err, errJournalInUse) {
		t.Fatalf("a second process appended to a journal in use: %v", err)
	}
	j.ForgetAtPositions(at[:2]) // stored
	j.Close()

	j = newFileJournal(path)
	left, err := j.Left(time.Now().Add(time.Second), 100)
	if err != nil {
		t.Fatal(err)
	}
	// The file still holds the two forgotten ones (its records are never rewritten):
	// the replay finds their prompts stored and skips them.
	if !reflect.DeepEqual(left, rows) {
		t.Fatalf("read back %d rows, want the 6 in the file:\n%+v\n%+v", len(left), left, rows)
	}
	if early, _ := j.Left(time.Now().Add(-time.Hour), 100); len(early) != 0 {
		t.Fatalf("%d rows journaled before an hour ago", len(early))
	}
	if err := j.Forget([]string{rows[0].ID, rows[1].ID}); err != nil {
		t.Fatal(err)
	}
	held, _ := j.Holds([]string{rows[0].ID, rows[2].ID})
	if held[rows[0].ID] || !held[rows[2].ID] {
		t.Fatalf("holds %v: want only the row not forgotten", held)
	}
	if left, _ := j.Left(time.Now().Add(time.Second), 100); !reflect.DeepEqual(left, rows[2:]) {
		t.Fatalf("%d rows left after forgetting two, want 4", len(left))
	}
	if err := j.Forget([]string{rows[2].ID, rows[3].ID, rows[4].ID, rows[5].ID}); err != nil {
		t.Fatal(err)
	}
	if left, _ := j.Left(time.Now().Add(time.Second), 100); len(left) != 0 {
		t.Fatalf("%d rows left after forgetting them all", len(left))
	}
	j.Close()
	if names := segmentFiles(t, j); len(names) != 0 {
		t.Fatalf("files left by a journal with nothing in it: %v", names)
	}
	// A closed journal stays closed: an answer given during shutdown fails rather
	// than reopen it behind its store's back.
	if _, err := j.Append(rows[:1], time.Now()); !errors.Is(err, errJournalClosed) {
		t.Fatalf("append after Close: %v", err)
	}
	if names := segmentFiles(t, j); len(names) != 0 {
		t.Fatalf("files left by an append after Close: %v", names)
	}
}

// TestJournalSegmentsGoOnceForgotten: the journal moves to a new file as it grows, and
// deletes a file once every record in it is forgotten — never one still holding a
// record (a crash would then lose an answer).
func TestJournalSegmentsGoOnceForgotten(t *testing.T) {
	path := filepath.Join(t.TempDir(), "g.db")
	j := newFileJournal(path)
	defer j.Close()
	var at []int64
	var rows []*models.Elicitation
	for i := range 12 { // 12 × 64 × ~16 KiB: three segments and more
		batch := journalRows(fmt.Sprintf("b%02d", i), 64, 16<<10)
		p, err := j.Append(batch, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		at, rows = append(at, p...), append(rows, batch...)
	}
	if n := len(segmentFiles(t, j)); n < 3 {
		t.Fatalf("%d segment files for 12 MiB of records", n)
	}
	// Forget all but the last record of the first segment: no file goes.
	first := uint32(at[0] >> 32)
	var keep int
	for i, p := range at {
		if uint32(p>>32) == first {
			keep = i
		}
	}
	before := len(segmentFiles(t, j))
	j.ForgetAtPositions(at[:keep])
	if n := len(segmentFiles(t, j)); n != before {
		t.Fatalf("%d segment files after forgetting part of the first, want %d", n, before)
	}
	j.ForgetAtPositions(at[keep : keep+1])
	if n := len(segmentFiles(t, j)); n != before-1 {
		t.Fatalf("%d segment files after forgetting all of the first, want %d", n, before-1)
	}
	held, _ := j.Holds([]string{rows[keep].ID, rows[keep+1].ID})
	if held[rows[keep].ID] || !held[rows[keep+1].ID] {
		t.Fatalf("holds %v after forgetting the first segment", held)
	}
	j.ForgetAtPositions(at)
	j.Close()
	if names := segmentFiles(t, j); len(names) != 0 {
		t.Fatalf("files left once every record was forgotten: %v", names)
	}
}

// TestJournalTailCutShortIsSkipped: a record a crash cut short (its answer was never
// given) or damaged ends its file; the records before it are read back.
func TestJournalTailCutShortIsSkipped(t *testing.T) {
	for _, damage := range []struct {
		name string
		do   func(b []byte) []byte
	}{
		{"cut short", func(b []byte) []byte { return b[:len(b)-5] }},
		{"checksum", func(b []byte) []byte { b[len(b)-1] ^= 0xff; return b }},
		{"length", func(b []byte) []byte { return append(b, 0xff, 0xff, 0xff, 0x7f, 0, 0, 0, 0, 1) }},
	} {
		t.Run(damage.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "g.db")
			j := newFileJournal(path)
			rows := journalRows("c", 3, 10)
			if _, err := j.Append(rows[:2], time.Now()); err != nil {
				t.Fatal(err)
			}
			if _, err := j.Append(rows[2:], time.Now()); err != nil {
				t.Fatal(err)
			}
			j.Close()
			names := segmentFiles(t, j)
			if len(names) != 1 {
				t.Fatalf("segment files %v", names)
			}
			b, err := os.ReadFile(names[0])
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(names[0], damage.do(b), 0o600); err != nil {
				t.Fatal(err)
			}
			j = newFileJournal(path)
			defer j.Close()
			left, err := j.Left(time.Now().Add(time.Second), 100)
			if err != nil {
				t.Fatal(err)
			}
			want := rows
			if damage.name != "length" {
				want = rows[:2]
			}
			if !reflect.DeepEqual(left, want) {
				t.Fatalf("read back %d rows, want %d", len(left), len(want))
			}
			// What is appended now is read back after them.
			more := journalRows("d", 1, 10)
			if _, err := j.Append(more, time.Now()); err != nil {
				t.Fatal(err)
			}
			j.Close()
			j = newFileJournal(path)
			left, _ = j.Left(time.Now().Add(time.Second), 100)
			if !reflect.DeepEqual(left, append(want, more...)) {
				t.Fatalf("after appending: read back %d rows, want %d", len(left), len(want)+1)
			}
		})
	}
}

// TestJournalOfEarlierReleasesIsTakenOver: the SQLite database an earlier release
// journaled in (<database>.decisions, JSON rows) is read into the journal at its first
// use and deleted, so its answers are stored like any a crash left.
func TestJournalOfEarlierReleasesIsTakenOver(t *testing.T) {
	path := filepath.Join(t.TempDir(), "g.db")
	rows := journalRows("e", 2, 10)
	old, err := sql.Open("sqlite", "file:"+path+".decisions?_pragma=journal_mode(WAL)")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := old.Exec(`CREATE TABLE decision_journal (id TEXT NOT NULL, body BLOB NOT NULL, created_at DATETIME NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		body, _ := json.Marshal(r)
		if _, err := old.Exec("INSERT INTO decision_journal (id, body, created_at) VALUES (?, ?, ?)", r.ID, body, time.Now().UTC()); err != nil {
			t.Fatal(err)
		}
	}
	old.Close()

	j := newFileJournal(path)
	left, err := j.Left(time.Now().Add(time.Second), 100)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(left, rows) {
		t.Fatalf("took over %d rows, want %d:\n%+v\n%+v", len(left), len(rows), left, rows)
	}
	if _, err := os.Stat(path + ".decisions"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the earlier journal is still there: %v", err)
	}
	j.Close()
	// Not yet stored: the next process still finds them.
	j = newFileJournal(path)
	defer j.Close()
	if left, _ := j.Left(time.Now().Add(time.Second), 100); !reflect.DeepEqual(left, rows) {
		t.Fatalf("after a restart: %d rows, want %d", len(left), len(rows))
	}
}

// TestJournalRecordsDecodeAsEncoded: a record decodes to the row encoded, whatever
// it sets; a record cut anywhere short is an error, never a panic or a wrong row.
func TestJournalRecordsDecodeAsEncoded(t *testing.T) {
	for _, r := range journalRows("f", 2, 10) {
		b := encodeJournaled(nil, r)
		got, err := decodeJournaled(b)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, r) {
			t.Fatalf("decoded\n%+v\nwant\n%+v", got, r)
		}
		for i := range len(b) - 1 {
			if _, err := decodeJournaled(b[:i]); err == nil {
				t.Fatalf("a record cut to %d of its %d bytes decoded", i, len(b))
			}
		}
		js, _ := json.Marshal(r)
		if got, err := decodeJournaled(js); err != nil || !reflect.DeepEqual(got, r) {
			t.Fatalf("a JSON record (earlier releases) decoded to %+v, %v", got, err)
		}
	}
}

func FuzzDecodeJournaled(f *testing.F) {
	for _, r := range journalRows("g", 2, 3) {
		f.Add(encodeJournaled(nil, r))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		e, err := decodeJournaled(b)
		if err != nil || b[0] != journalFormat {
			return
		}
		again, err := decodeJournaled(encodeJournaled(nil, e))
		if err != nil || !reflect.DeepEqual(again, e) {
			t.Fatalf("re-encoding %+v decoded to %+v, %v", e, again, err)
		}
	})
}
