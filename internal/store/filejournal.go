package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gatehouse-dev/gatehouse/models"
)

// fileJournal is the decision journal of a SQLite deployment: rule answers appended to
// files beside the database, one write(2) for each group of answers, and nothing else
// on the answer's path. A journal row in a database of its own cost an INSERT, a
// DELETE once the prompt was stored and a checkpoint copying it a third time — a
// seventh of an answer's CPU under load; an append costs one system call. Like the
// database's own commits (synchronous=NORMAL) an append survives the process dying at
// any point, not the machine losing power.
//
// The journal is a sequence of segments, <database>.decisions-NNNNNN.log. Each record
// is its payload's length and CRC-32C (4 bytes each, little-endian), then the payload:
// the time it was journaled (Unix nanoseconds, 8 bytes) and the row (encodeJournaled).
// The segment being written is closed once past journalSegmentSize and a new one
// begun; a segment is deleted once every record in it is forgotten (its prompt stored),
// so a journal whose answers are all stored leaves no file behind. A record cut short
// by a crash mid-write was never answered (the answer waits for the write) and ends
// its segment.
//
// One process writes a journal at a time: it holds an exclusive lock on
// <database>.decisions.lock from its first use of the journal to Close. Commands that
// only read the database (gatehouse audit) never open it.
type fileJournal struct {
	base string // <database>.decisions

	mu     sync.Mutex
	opened bool
	closed bool // by Close: a journal is not reopened behind its store's back
	lock   *os.File
	cur    *segment // the segment appended to (nil: begin segment next first)
	next   uint32
	segs   map[uint32]*segment
	// byID locates every record not yet forgotten; left is the records a previous
	// process left (read at open), oldest first, for Replay.
	byID map[string]int64
	left []journaled
	buf  []byte
}

// journaled is a record read back: the row and when it was journaled.
type journaled struct {
	row *models.Elicitation
	at  time.Time
}

// segment is one journal file: how many records it holds and how many of those are
// forgotten, and each record's id (emptied once forgotten), by its index.
type segment struct {
	n    uint32
	f    *os.File // the segment being written; nil for the others
	size int64
	ids  []string
	left int // records not yet forgotten
}

// journalSegmentSize is how large a segment grows before the next begins.
const journalSegmentSize = 4 << 20

// journalHeader is a record's length and checksum; journalStamp its time.
const (
	journalHeader = 8
	journalStamp  = 8
	// journalMaxRecord bounds a record read back: a prompt row is far smaller, a
	// larger length is a torn or foreign file.
	journalMaxRecord = 64 << 20
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// errJournalInUse: another process holds the journal (two servers on one SQLite
// database).
var errJournalInUse = errors.New("the decision journal is in use by another Gatehouse process: one server at a time may use a SQLite database")

// errJournalClosed: the store was closed.
var errJournalClosed = errors.New("the decision journal is closed")

func newFileJournal(dbPath string) *fileJournal {
	return &fileJournal{base: dbPath + ".decisions"}
}

// position is where record i of segment n is: what Append returns and
// ForgetAtPositions takes. Never zero (elicit reads zero as "no position").
func position(n uint32, i int) int64 { return int64(n)<<32 | int64(i+1) }

func (j *fileJournal) segmentPath(n uint32) string {
	return fmt.Sprintf("%s-%06d.log", j.base, n)
}

// ready opens the journal on its first use: takes its lock, reads what earlier
// processes left in it (and in the SQLite journal of releases before this one), and
// begins a segment of its own. j.mu is held.
func (j *fileJournal) ready() error {
	if j.opened {
		return nil
	}
	if j.closed {
		return errJournalClosed
	}
	lock, err := os.OpenFile(j.base+".lock", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return fmt.Errorf("open the decision journal's lock: %w", err)
	}
	if err := lockFile(lock); err != nil {
		lock.Close()
		return err
	}
	j.segs, j.byID, j.left = map[uint32]*segment{}, map[string]int64{}, nil
	last, err := j.readSegments()
	j.next = last + 1
	if err == nil {
		err = j.begin()
	}
	if err == nil {
		err = j.importSQLiteJournal()
	}
	if err != nil {
		j.closeFiles()
		lock.Close()
		return err
	}
	j.lock, j.opened = lock, true
	return nil
}

// readSegments reads every segment left by earlier processes into j.left and returns
// the highest segment number found. j.mu is held.
func (j *fileJournal) readSegments() (uint32, error) {
	names, err := filepath.Glob(j.base + "-*.log")
	if err != nil {
		return 0, err
	}
	var nums []uint32
	for _, name := range names {
		digits := strings.TrimSuffix(strings.TrimPrefix(name, j.base+"-"), ".log")
		n, err := strconv.ParseUint(digits, 10, 32)
		if err != nil || n == 0 {
			continue // not one of ours
		}
		nums = append(nums, uint32(n))
	}
	slices.Sort(nums)
	for _, n := range nums {
		b, err := os.ReadFile(j.segmentPath(n))
		if err != nil {
			return 0, fmt.Errorf("read the decision journal: %w", err)
		}
		seg := &segment{n: n, size: int64(len(b))}
		j.segs[n] = seg
		for len(b) >= journalHeader {
			size := binary.LittleEndian.Uint32(b)
			if size < journalStamp || size > journalMaxRecord || int(size) > len(b)-journalHeader {
				break // cut short by a crash: never answered
			}
			payload := b[journalHeader : journalHeader+size]
			if crc32.Checksum(payload, castagnoli) != binary.LittleEndian.Uint32(b[4:]) {
				break
			}
			b = b[journalHeader+size:]
			row, err := decodeJournaled(payload[journalStamp:])
			if err != nil {
				return 0, fmt.Errorf("%s: %w", j.segmentPath(n), err)
			}
			at := time.Unix(0, int64(binary.LittleEndian.Uint64(payload))).UTC()
			j.adopt(seg, row, at)
		}
		if seg.left == 0 {
			j.drop(seg)
		}
	}
	if len(nums) == 0 {
		return 0, nil
	}
	return nums[len(nums)-1], nil
}

// adopt records row, read back from seg, as left for Replay (the first of two records
// of one id: an import interrupted by a crash repeats some). j.mu is held.
func (j *fileJournal) adopt(seg *segment, row *models.Elicitation, at time.Time) {
	id := row.ID
	if _, dup := j.byID[id]; dup {
		id = ""
	} else {
		j.byID[id] = position(seg.n, len(seg.ids))
		j.left = append(j.left, journaled{row: row, at: at})
		seg.left++
	}
	seg.ids = append(seg.ids, id)
}

// begin opens the next segment for appending. j.mu is held.
func (j *fileJournal) begin() error {
	n := j.next
	f, err := os.OpenFile(j.segmentPath(n), os.O_CREATE|os.O_EXCL|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("begin a decision journal segment: %w", err)
	}
	j.next++
	j.cur = &segment{n: n, f: f}
	j.segs[n] = j.cur
	return nil
}

// Append writes rows, journaled at now, in one write and returns their positions.
func (j *fileJournal) Append(rows []*models.Elicitation, now time.Time) ([]int64, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if err := j.ready(); err != nil {
		return nil, err
	}
	if j.cur == nil {
		if err := j.begin(); err != nil {
			return nil, err
		}
	}
	buf := j.buf[:0]
	for _, r := range rows {
		buf = appendRecord(buf, r, now)
	}
	if cap(buf) <= 1<<20 {
		j.buf = buf
	}
	seg := j.cur
	if _, err := seg.f.Write(buf); err != nil {
		// A partial write would leave the next record misaligned: cut it off, or
		// go on in a new segment (this one's tail reads as a crash's).
		if seg.f.Truncate(seg.size) != nil {
			j.retire(seg)
		}
		return nil, fmt.Errorf("write the decision journal: %w", err)
	}
	seg.size += int64(len(buf))
	at := make([]int64, len(rows))
	for i, r := range rows {
		at[i] = position(seg.n, len(seg.ids))
		j.byID[r.ID] = at[i]
		seg.ids = append(seg.ids, r.ID)
	}
	seg.left += len(rows)
	if seg.size >= journalSegmentSize {
		j.retire(seg) // the next Append begins the next segment
	}
	return at, nil
}

// appendRecord appends row's record, journaled at at, to buf.
func appendRecord(buf []byte, row *models.Elicitation, at time.Time) []byte {
	start := len(buf)
	buf = append(buf, make([]byte, journalHeader)...)
	buf = binary.LittleEndian.AppendUint64(buf, uint64(at.UnixNano()))
	buf = encodeJournaled(buf, row)
	payload := buf[start+journalHeader:]
	binary.LittleEndian.PutUint32(buf[start:], uint32(len(payload)))
	binary.LittleEndian.PutUint32(buf[start+4:], crc32.Checksum(payload, castagnoli))
	return buf
}

// retire closes seg for appending, deleting it when nothing in it is left. j.mu is held.
func (j *fileJournal) retire(seg *segment) {
	seg.f.Close()
	seg.f = nil
	if j.cur == seg {
		j.cur = nil
	}
	if seg.left == 0 {
		j.drop(seg)
	}
}

// drop deletes seg, every record of which is forgotten. j.mu is held.
func (j *fileJournal) drop(seg *segment) {
	delete(j.segs, seg.n)
	_ = os.Remove(j.segmentPath(seg.n)) // left behind, it is read and skipped next time
}

// forgetAt forgets the records at positions at, deleting each segment left with none
// (but the one being written). j.mu is held.
func (j *fileJournal) forgetAt(at []int64) {
	for _, p := range at {
		seg := j.segs[uint32(p>>32)]
		i := int(p&0xffffffff) - 1
		if seg == nil || i < 0 || i >= len(seg.ids) || seg.ids[i] == "" {
			continue // forgotten already
		}
		if j.byID[seg.ids[i]] == p {
			delete(j.byID, seg.ids[i])
		}
		seg.ids[i] = ""
		if seg.left--; seg.left == 0 && seg != j.cur {
			j.drop(seg)
		}
	}
}

// ForgetAtPositions forgets the records Append put at at: their prompts are stored.
func (j *fileJournal) ForgetAtPositions(at []int64) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.forgetAt(at)
}

// Forget forgets the records of ids: their prompts are stored.
func (j *fileJournal) Forget(ids []string) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if err := j.ready(); err != nil {
		return err
	}
	at := make([]int64, 0, len(ids))
	for _, id := range ids {
		if p, ok := j.byID[id]; ok {
			at = append(at, p)
		}
	}
	j.forgetAt(at)
	if len(j.byID) == 0 {
		j.left = nil
	}
	return nil
}

// Left returns up to limit of the records earlier processes left and nobody has
// forgotten, journaled before before, oldest first.
func (j *fileJournal) Left(before time.Time, limit int) ([]*models.Elicitation, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if err := j.ready(); err != nil {
		return nil, err
	}
	var out []*models.Elicitation
	for _, l := range j.left {
		if len(out) == limit {
			break
		}
		if _, ok := j.byID[l.row.ID]; ok && l.at.Before(before) {
			out = append(out, l.row)
		}
	}
	return out, nil
}

// Holds reports which of ids have records not yet forgotten.
func (j *fileJournal) Holds(ids []string) (map[string]bool, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if err := j.ready(); err != nil {
		return nil, err
	}
	out := make(map[string]bool, len(ids))
	for _, id := range ids {
		if _, ok := j.byID[id]; ok {
			out[id] = true
		}
	}
	return out, nil
}

// Close closes the journal's files and lets go of its lock; a segment with nothing
// left in it is deleted.
func (j *fileJournal) Close() {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.closed = true
	if !j.opened {
		return
	}
	if j.cur != nil {
		j.retire(j.cur)
	}
	j.closeFiles()
	j.lock.Close()
	j.opened = false
}

// closeFiles closes every open segment. j.mu is held.
func (j *fileJournal) closeFiles() {
	for _, seg := range j.segs {
		if seg.f != nil {
			seg.f.Close()
			seg.f = nil
		}
	}
	j.cur = nil
}
