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
	rows  [][]string
	notes []string
}

func (t *table) row(db string, cols ...string) {
	t.rows = append(t.rows, append([]string{db}, cols...))
}

func (t *table) note(db, msg string) { t.notes = append(t.notes, db+": "+msg) }

func (t *table) print(w io.Writer) {
	head := []string{"db", "measure", "gatehouse", "baseline", "ratio", "target"}
	all := append([][]string{head}, t.rows...)
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
	for _, r := range t.rows {
		line(r)
	}
	for _, n := range t.notes {
		fmt.Fprintln(w, "note:", n)
	}
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
