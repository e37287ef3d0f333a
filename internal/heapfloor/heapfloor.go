// Package heapfloor keeps the garbage collector from running while the heap is small.
//
// Go collects when the heap has grown by GOGC percent (100) over what the last
// collection left live. A Gatehouse server answering tool calls keeps little live —
// a few MiB — while every answer allocates a few dozen KiB, so with Go's default it
// collected some forty times a second under load and spent about a tenth of its CPU
// on collecting and its write barriers. A floor under the heap's goal (the heap size
// that starts the next collection) makes small heaps collect far less often; a large
// heap — thousands of parked requests — is above the floor and collects as Go
// would, so what a parked request costs does not change. It is what a "memory
// ballast" once did, done by setting GOGC after each cycle; GOMEMLIMIT cannot do it,
// since a memory limit only ever makes collections more frequent.
package heapfloor

import (
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"sync/atomic"
)

// liveMetric is the heap the last collection left live (Go 1.21+).
const liveMetric = "/gc/heap/live:bytes"

// basePercent is Go's default GOGC, the growth allowed above the floor.
const basePercent = 100

// runtimeMinimum is the heap goal Go keeps at GOGC 100 however little is live; it
// scales with GOGC (at 1,600 it is 64 MiB), so a GOGC that reaches the floor from a
// tiny live heap would overshoot it by far: the percent is capped where this alone is
// the floor.
const runtimeMinimum = 4 << 20

var started sync.Once

// Start keeps the heap goal at or above floor bytes for the rest of the process. It
// does nothing when floor is zero or less, or when the operator set GOGC: their
// choice wins. Only the first call counts.
func Start(floor int64) {
	if floor <= 0 || os.Getenv("GOGC") != "" {
		return
	}
	started.Do(func() { start(floor) })
}

// start tunes now and after every collection until stop.
func start(floor int64) *tuner {
	t := &tuner{floor: floor, sample: []metrics.Sample{{Name: liveMetric}}, percent: -1}
	t.tune()
	t.arm()
	return t
}

// tuner sets GOGC after each collection from what it left live.
type tuner struct {
	floor   int64
	sample  []metrics.Sample
	percent int // the GOGC last set; -1 before the first
	stopped atomic.Bool
}

// stop ends the tuning after the next collection (tests).
func (t *tuner) stop() { t.stopped.Store(true) }

// sentinel is an object whose finalizer runs after the collection that finds it
// unreachable: once per cycle, since each run makes the next one.
type sentinel struct{ _ [16]byte }

// arm makes a fresh sentinel whose finalizer tunes and arms again.
func (t *tuner) arm() {
	runtime.SetFinalizer(&sentinel{}, func(*sentinel) {
		if t.stopped.Load() {
			return
		}
		t.tune()
		t.arm()
	})
}

// tune sets GOGC so that the next collection starts at the larger of Go's own goal
// and the floor.
func (t *tuner) tune() {
	metrics.Read(t.sample)
	var live int64
	if t.sample[0].Value.Kind() == metrics.KindUint64 {
		live = int64(min(t.sample[0].Value.Uint64(), math.MaxInt64))
	}
	p := Percent(live, t.floor)
	if d := p - t.percent; t.percent < 0 || d > t.percent/10 || -d > t.percent/10 {
		// A change of a tenth or less is left alone: live moves a little every cycle.
		debug.SetGCPercent(p)
		t.percent = p
	}
}

// Percent is the GOGC that puts the heap goal at max(live·2, floor): Go's default
// above the floor, the growth that reaches the floor below it — at most the GOGC at
// which Go's own minimum goal is the floor.
func Percent(live, floor int64) int {
	if live*(100+basePercent)/100 >= floor {
		return basePercent
	}
	limit := floor * 100 / runtimeMinimum
	if live <= 0 {
		return int(max(limit, basePercent))
	}
	return int(max(min((floor-live)*100/live, limit), basePercent))
}
