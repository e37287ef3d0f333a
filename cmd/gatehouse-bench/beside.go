package main

import (
	"fmt"
	"net/http"
)

// besideResolve takes the baselines' resolve samples again beside Gatehouse's: one of
// each baseline after each of Gatehouse's samples, outside its timing. The resolve
// targets are ratios to the floor, and on a shared machine the floor itself moves
// by a third between minutes; samples taken in the same minute, in turn, set each
// ratio by the machine as it was while Gatehouse was measured, not minutes earlier.
type besideResolve struct {
	bases   []*baseline
	hcs     []*http.Client
	agents  []*http.Client
	samples []baselineFigures // aligned with bases; only Resolve is set
}

// newBesideResolve samples the baselines cmp sets beside Gatehouse (the floor, and the
// peer when it ran) from bases (the floor's first, then the peer's).
func newBesideResolve(cmp *comparison, bases []*baseline) *besideResolve {
	n := 1
	if cmp.peer != nil && len(bases) > 1 {
		n = 2
	}
	b := &besideResolve{bases: bases[:n], samples: make([]baselineFigures, n)}
	for range b.bases {
		b.hcs = append(b.hcs, newHTTP(4))
		b.agents = append(b.agents, newHTTP(4))
	}
	return b
}

// sample takes one resolve sample of each baseline (latencyHooks.AfterAnswer).
func (b *besideResolve) sample(string) error {
	for i, base := range b.bases {
		d, err := base.resolveSample(b.hcs[i], b.agents[i])
		if err != nil {
			return fmt.Errorf("%s beside it: %w", base.name, err)
		}
		b.samples[i].Resolve = append(b.samples[i].Resolve, d)
	}
	return nil
}

// comparison is cmp with the resolve samples taken beside Gatehouse's.
func (b *besideResolve) comparison(cmp *comparison) *comparison {
	out := &comparison{}
	with := func(figs *baselineFigures, i int) *baselineFigures {
		if figs == nil || i >= len(b.samples) {
			return figs
		}
		c := *figs
		c.Resolve = b.samples[i].Resolve
		return &c
	}
	out.floor, out.peer = with(cmp.floor, 0), with(cmp.peer, 1)
	return out
}

// close lets the connections go.
func (b *besideResolve) close() {
	for i := range b.hcs {
		b.hcs[i].CloseIdleConnections()
		b.agents[i].CloseIdleConnections()
	}
}
