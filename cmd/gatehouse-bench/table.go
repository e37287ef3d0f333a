package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

type table struct {
	rows   [][]string
	notes  []string
	noPeer bool // the peer did not run: no peer column
}

// row adds a figure compared with a baseline on the same server (or none): its ratio
// goes beside the baseline; the floor and peer cells stay empty.
func (t *table) row(db, measure, gatehouse, baseline, ratio, target string) {
	if ratio != "—" && baseline != "—" {
		baseline += " (" + ratio + ")"
	}
	t.vs(db, measure, gatehouse, "—", "—", baseline, target)
}

// vs adds a figure beside the floor and the peer (each cell a figure and Gatehouse's
// ratio to it) and a baseline on the same server.
func (t *table) vs(db, measure, gatehouse, floor, peer, baseline, target string) {
	t.rows = append(t.rows, []string{db, measure, gatehouse, floor, peer, baseline, target})
}

func (t *table) note(db, msg string) { t.notes = append(t.notes, db+": "+msg) }

func (t *table) print(w io.Writer) {
	head := []string{"db", "measure", "gatehouse", "floor (gatehouse ×)", "peer (gatehouse ×)", "same-server baseline", "target"}
	keep := func(r []string) []string {
		if !t.noPeer {
			return r
		}
		return append(append([]string(nil), r[:4]...), r[5:]...)
	}
	head = keep(head)
	all := [][]string{head}
	for _, r := range t.rows {
		all = append(all, keep(r))
	}
	width := make([]int, len(head))
	for _, r := range all {
		for i, c := range r {
			if n := len([]rune(c)); n > width[i] {
				width[i] = n
			}
		}
	}
	line := func(r []string) {
		var b strings.Builder
		b.WriteString("|")
		for i, c := range r {
			b.WriteString(" " + c + strings.Repeat(" ", width[i]-len([]rune(c))) + " |")
		}
		fmt.Fprintln(w, b.String())
	}
	line(head)
	sep := make([]string, len(head))
	for i := range sep {
		sep[i] = strings.Repeat("-", width[i])
	}
	line(sep)
	for _, r := range all[1:] {
		line(r)
	}
	// One line per database: the targets its rows met and missed.
	var dbs []string
	met, missed := map[string]int{}, map[string][]string{}
	for _, r := range t.rows {
		db, target := r[0], r[len(r)-1]
		if _, ok := met[db]; !ok {
			dbs = append(dbs, db)
			met[db] = 0
		}
		switch {
		case strings.HasSuffix(target, ": met"):
			met[db]++
		case strings.HasSuffix(target, ": MISSED"):
			missed[db] = append(missed[db], r[1])
		}
	}
	fmt.Fprintln(w)
	for _, db := range dbs {
		m := ""
		if len(missed[db]) > 0 {
			m = " — missed: " + strings.Join(missed[db], "; ")
		}
		fmt.Fprintf(w, "targets %s: %d met, %d missed%s\n", db, met[db], len(missed[db]), m)
	}
	for _, n := range t.notes {
		fmt.Fprintln(w, "note:", n)
	}
}

// verdict is a target cell: the target and whether it was met.
func verdict(target string, ok bool) string {
	if ok {
		return target + ": met"
	}
	return target + ": MISSED"
}

func fmtDur(d time.Duration) string {
	switch {
	case d < time.Millisecond:
		return fmt.Sprintf("%dµs", d.Microseconds())
	default:
		return fmt.Sprintf("%.2fms", float64(d.Microseconds())/1000)
	}
}

func ratio(a, b time.Duration) string {
	if b == 0 {
		return "—"
	}
	return fmt.Sprintf("%.2f×", float64(a)/float64(b))
}

func bgctx() context.Context { return context.Background() }

func cpuModel() string {
	raw, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "unknown CPU"
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if strings.HasPrefix(line, "model name") {
			if i := strings.Index(line, ":"); i >= 0 {
				return strings.TrimSpace(line[i+1:])
			}
		}
	}
	return "unknown CPU"
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "gatehouse-bench:", err)
	os.Exit(1)
}
