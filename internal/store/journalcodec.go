package store

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/gatehouse-dev/gatehouse/models"
)

// A journaled rule answer is written on the path of the answer itself, so its
// encoding is a flat binary one rather than the row's JSON: encoding/json spent as long
// re-validating the row's already-encoded params as the rest of the write took. The
// first byte names the encoding; a record from a release that journaled JSON starts
// with '{' and still decodes.

// journalFormat is the first byte of a record encodeJournaled wrote.
const journalFormat byte = 1

var errJournalRecord = errors.New("a decision journal record does not decode")

// encodeJournaled appends e's encoding to buf: every column InsertDecided stores, in
// a fixed order; times as Unix nanoseconds (read back in UTC), optional values behind
// a presence byte.
func encodeJournaled(buf []byte, e *models.Elicitation) []byte {
	buf = append(buf, journalFormat)
	for _, s := range []string{e.ID, e.SessionID, e.Origin} {
		buf = appendString(buf, s)
	}
	buf = appendBytes(buf, e.Params)
	buf = appendString(buf, e.Status)
	buf = appendOptString(buf, e.Action)
	buf = appendBytes(buf, e.Content)
	buf = appendOptString(buf, e.ResolvedBy)
	buf = appendOptString(buf, e.ResolvedVia)
	buf = binary.AppendVarint(buf, e.CreatedAt.UnixNano())
	buf = appendOptTime(buf, e.ResolvedAt)
	buf = binary.AppendVarint(buf, e.ExpiresAt.UnixNano())
	buf = appendOptTime(buf, e.ConsumedAt)
	buf = appendOptTime(buf, e.LeaseUntil)
	buf = binary.AppendVarint(buf, int64(e.Logged))
	buf = binary.AppendVarint(buf, int64(e.Notified))
	for _, s := range []*string{e.CallKey, e.RuleID, e.TokenID} {
		buf = appendOptString(buf, s)
	}
	return buf
}

// decodeJournaled is the row a journal record holds, in either encoding.
func decodeJournaled(b []byte) (*models.Elicitation, error) {
	if len(b) > 0 && b[0] == '{' {
		var e models.Elicitation
		if err := json.Unmarshal(b, &e); err != nil {
			return nil, fmt.Errorf("%w: %v", errJournalRecord, err)
		}
		if string(e.Content) == "null" { // a row without content: NULL, as written
			e.Content = nil
		}
		return &e, nil
	}
	if len(b) == 0 || b[0] != journalFormat {
		return nil, fmt.Errorf("%w: unknown encoding", errJournalRecord)
	}
	d := decoder{b: b[1:]}
	var e models.Elicitation
	e.ID, e.SessionID, e.Origin = d.string(), d.string(), d.string()
	e.Params = d.bytes()
	e.Status = d.string()
	e.Action = d.optString()
	e.Content = d.bytes()
	e.ResolvedBy, e.ResolvedVia = d.optString(), d.optString()
	e.CreatedAt = d.time()
	e.ResolvedAt = d.optTime()
	e.ExpiresAt = d.time()
	e.ConsumedAt, e.LeaseUntil = d.optTime(), d.optTime()
	e.Logged, e.Notified = int(d.varint()), int(d.varint())
	e.CallKey, e.RuleID, e.TokenID = d.optString(), d.optString(), d.optString()
	if d.err != nil {
		return nil, d.err
	}
	if len(d.b) != 0 {
		return nil, fmt.Errorf("%w: %d bytes past its end", errJournalRecord, len(d.b))
	}
	return &e, nil
}

func appendString(buf []byte, s string) []byte {
	return append(binary.AppendUvarint(buf, uint64(len(s))), s...)
}

func appendBytes(buf, b []byte) []byte {
	return append(binary.AppendUvarint(buf, uint64(len(b))), b...)
}

func appendOptString(buf []byte, s *string) []byte {
	if s == nil {
		return append(buf, 0)
	}
	return appendString(append(buf, 1), *s)
}

func appendOptTime(buf []byte, t *time.Time) []byte {
	if t == nil {
		return append(buf, 0)
	}
	return binary.AppendVarint(append(buf, 1), t.UnixNano())
}

// decoder reads encodeJournaled's fields; the first short or malformed one sets err,
// and every later read returns a zero value.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) fail(what string) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: %s", errJournalRecord, what)
	}
	d.b = nil
}

func (d *decoder) varint() int64 {
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail("a number is cut short")
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) bytes() []byte {
	n, k := binary.Uvarint(d.b)
	if k <= 0 || n > uint64(len(d.b)-k) {
		d.fail("a value is cut short")
		return nil
	}
	v := d.b[k : k+int(n)]
	d.b = d.b[k+int(n):]
	if n == 0 {
		return nil
	}
	return append([]byte(nil), v...)
}

func (d *decoder) string() string { return string(d.bytes()) }

// present reads an optional value's presence byte.
func (d *decoder) present() bool {
	if len(d.b) == 0 || d.b[0] > 1 {
		d.fail("an optional value is malformed")
		return false
	}
	p := d.b[0] == 1
	d.b = d.b[1:]
	return p
}

func (d *decoder) optString() *string {
	if !d.present() {
		return nil
	}
	s := d.string()
	return &s
}

func (d *decoder) time() time.Time { return time.Unix(0, d.varint()).UTC() }

func (d *decoder) optTime() *time.Time {
	if !d.present() {
		return nil
	}
	t := d.time()
	return &t
}
