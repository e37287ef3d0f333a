package stream

import "time"

// RenderEvery is the shortest interval between two re-renders of one live page.
const RenderEvery = 250 * time.Millisecond

// Pacer spaces out the re-renders of a live view. The first change after a quiet spell
// is acted on at once; changes within RenderEvery of the last render are folded into
// one render at the end of that interval. A burst of N events over a time T thus costs
// at most T/every + 2 renders (each a set of queries) instead of N, and the last render
// always comes after the last change, so nothing is left unshown.
//
// A Pacer belongs to one stream's goroutine; it is not safe for concurrent use.
type Pacer struct {
	every   time.Duration
	last    time.Time
	pending bool
	timer   *time.Timer
}

// NewPacer returns a pacer allowing one render per every.
func NewPacer(every time.Duration) *Pacer { return &Pacer{every: every} }

// Rendered records a render made now (e.g. the first one, at connect).
func (p *Pacer) Rendered(now time.Time) {
	p.last = now
	p.pending = false
	p.stop()
}

// Note records a change that calls for a render.
func (p *Pacer) Note() { p.pending = true }

// Due reports whether a render is due now; if so it is counted as done. When a change
// is waiting but it is too soon, C fires once it is due.
func (p *Pacer) Due(now time.Time) bool {
	if !p.pending {
		return false
	}
	if wait := p.every - now.Sub(p.last); wait > 0 {
		if p.timer == nil {
			p.timer = time.NewTimer(wait)
		}
		return false
	}
	p.Rendered(now)
	return true
}

// C fires when a folded change becomes due (nil, never firing, while none waits).
func (p *Pacer) C() <-chan time.Time {
	if p.timer == nil {
		return nil
	}
	return p.timer.C
}

// Stop releases the timer.
func (p *Pacer) Stop() { p.stop() }

func (p *Pacer) stop() {
	if p.timer != nil {
		p.timer.Stop()
		p.timer = nil
	}
}
