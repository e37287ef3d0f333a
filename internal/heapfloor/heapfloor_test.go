package heapfloor

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
)

func TestPercent(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct {
		live, floor int64
		want        int
	}{
		{live: 8 * mib, floor: 64 * mib, want: 700},   // goal 8 + 56 = 64 MiB
		{live: 32 * mib, floor: 64 * mib, want: 100},  // twice live is the floor
		{live: 200 * mib, floor: 64 * mib, want: 100}, // above the floor: Go's own
		{live: 2 * mib, floor: 64 * mib, want: 1600},  // Go's minimum goal (4 MiB × 16) is the floor
		{live: 1, floor: 64 * mib, want: 1600},
		{live: 0, floor: 64 * mib, want: 1600},
		{live: 0, floor: 2 * mib, want: 100}, // a floor under Go's own minimum: Go's default
	} {
		if got := Percent(c.live, c.floor); got != c.want {
			t.Errorf("Percent(%d, %d) = %d, want %d", c.live, c.floor, got, c.want)
		}
	}
}

func read(name string) uint64 {
	s := []metrics.Sample{{Name: name}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// TestOperatorsGOGCWins: with GOGC in the environment Start changes nothing.
func TestOperatorsGOGCWins(t *testing.T) {
	t.Setenv("GOGC", "100")
	before := read("/gc/gogc:percent")
	Start(1 << 30)
	if got := read("/gc/gogc:percent"); got != before {
		t.Fatalf("GOGC moved from %d to %d though the operator set it", before, got)
	}
}

// TestTuner: the heap's goal is at the floor at once, and back to Go's default (GOGC
// 100) after collections find more than half the floor live.
func TestTuner(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	const floor = 256 << 20
	runtime.GC()
	if goal := read("/gc/heap/goal:bytes"); goal >= floor {
		t.Skipf("the heap goal is already %d bytes: nothing to show", goal)
	}
	tu := start(floor)
	defer tu.stop()
	if goal := read("/gc/heap/goal:bytes"); goal < floor*9/10 || goal > floor*11/10 {
		t.Fatalf("heap goal %d bytes after Start(%d): want the floor", goal, floor)
	}
	if p := read("/gc/gogc:percent"); p <= 100 {
		t.Fatalf("GOGC %d with a small heap under the floor: want more than Go's 100", p)
	}
	live := make([][]byte, 0, 200)
	for range 200 {
		live = append(live, make([]byte, 1<<20)) // 200 MiB live: past half the floor
	}
	// Each collection runs the sentinel's finalizer, which tunes once it has run.
	for i := 0; i < 1000 && read("/gc/gogc:percent") != 100; i++ {
		runtime.GC()
		runtime.Gosched()
	}
	if p := read("/gc/gogc:percent"); p != 100 {
		t.Fatalf("GOGC %d with %d MiB live over a %d MiB floor: want Go's 100", p, 200, floor>>20)
	}
	runtime.KeepAlive(live)
}
