package shell

import "sync"

// Reading a line is the costliest step of a rule's match and of a risk assessment, and
// the same lines come back again and again (an agent runs `go test ./...` all day; a
// hook's line is read by the risk table and by every rule that compares it; a rule's
// own pattern is read on every match). Lines read are remembered, read-only, in a
// small table that starts over when full.

// memoMax bounds the lines remembered; memoMaxSource the length of one remembered.
const (
	memoMax       = 1024
	memoMaxSource = 4 << 10
)

type memoKey struct {
	src, dir string
	unwrap   bool
}

var memo = struct {
	sync.Mutex
	lines map[memoKey]*Line
}{lines: map[memoKey]*Line{}}

// remembered is parse(src, dir, unwrap), read once for each short line while it stays
// in the table. Callers must not change the Line (none does: it is read only).
func remembered(src, dir string, unwrap bool) *Line {
	if len(src) > memoMaxSource {
		return parse(src, dir, unwrap)
	}
	k := memoKey{src, dir, unwrap}
	memo.Lock()
	l, ok := memo.lines[k]
	memo.Unlock()
	if ok {
		return l
	}
	l = parse(src, dir, unwrap)
	memo.Lock()
	if len(memo.lines) >= memoMax {
		clear(memo.lines)
	}
	memo.lines[k] = l
	memo.Unlock()
	return l
}
