package store

import (
	"database/sql"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"
)

// importSQLiteJournal moves what the decision journal of earlier releases — a SQLite
// database of its own, <database>.decisions — still holds into this journal, then
// deletes it: the first start after an upgrade stores those answers like any a crash
// left. The rows are made durable here before the old journal goes. j.mu is held.
func (j *fileJournal) importSQLiteJournal() error {
	if _, err := os.Stat(j.base); errors.Is(err, os.ErrNotExist) {
		return nil
	} else if err != nil {
		return err
	}
	db, err := sql.Open("sqlite", "file:"+j.base+"?_pragma=busy_timeout(10000)")
	if err != nil {
		return fmt.Errorf("open the earlier decision journal: %w", err)
	}
	var buf []byte
	var recs []journaled
	rows, err := db.Query("SELECT body, created_at FROM decision_journal ORDER BY rowid")
	if err != nil {
		db.Close()
		if !strings.Contains(err.Error(), "no such table") {
			return fmt.Errorf("read the earlier decision journal: %w", err)
		}
		return j.removeSQLiteJournal()
	}
	for rows.Next() {
		var body []byte
		var at time.Time
		if err = rows.Scan(&body, &at); err != nil {
			break
		}
		row, derr := decodeJournaled(body)
		if derr != nil {
			err = derr
			break
		}
		recs = append(recs, journaled{row: row, at: at.UTC()})
		buf = appendRecord(buf, row, at)
	}
	if err == nil {
		err = rows.Err()
	}
	rows.Close()
	db.Close()
	if err != nil {
		return fmt.Errorf("read the earlier decision journal: %w", err)
	}
	if len(recs) > 0 {
		seg := j.cur
		if _, err := seg.f.Write(buf); err != nil {
			return fmt.Errorf("import the earlier decision journal: %w", err)
		}
		if err := seg.f.Sync(); err != nil {
			return fmt.Errorf("import the earlier decision journal: %w", err)
		}
		seg.size += int64(len(buf))
		for _, r := range recs {
			j.adopt(seg, r.row, r.at)
		}
	}
	return j.removeSQLiteJournal()
}

// removeSQLiteJournal deletes the earlier releases' journal database and its files.
func (j *fileJournal) removeSQLiteJournal() error {
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if err := os.Remove(j.base + suffix); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("remove the earlier decision journal: %w", err)
		}
	}
	return nil
}
