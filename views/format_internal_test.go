package views

import (
	"testing"
	"time"
)

func TestRelative(t *testing.T) {
	now := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	for d, want := range map[time.Duration]string{
		24*time.Hour - time.Second: "in 23 h",
		30 * time.Second:           "in under a minute",
		-30 * time.Second:          "just now",
		5 * time.Minute:            "in 5 min",
		-90 * time.Minute:          "1 h ago",
		72 * time.Hour:             "in 3 d",
		-10 * 24 * time.Hour:       "10 d ago",
	} {
		if got := relative(now.Add(d), now); got != want {
			t.Errorf("%s: %q, want %q", d, got, want)
		}
	}
}
