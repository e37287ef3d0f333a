package notify

import (
	"testing"
	"time"
)

func TestQuietHoursHoldUntilTheyEnd(t *testing.T) {
	berlin := &QuietHours{Start: "22:00", End: "07:00", TimeZone: "Europe/Berlin"} // UTC+1 in December
	day := &QuietHours{Start: "12:00", End: "13:30"}
	at := func(s string) time.Time {
		tm, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return tm
	}
	for _, c := range []struct {
		q        *QuietHours
		in, want string
	}{
		{nil, "2026-12-01T23:00:00Z", "2026-12-01T23:00:00Z"},
		{berlin, "2026-12-01T20:59:00Z", "2026-12-01T20:59:00Z"}, // 21:59 Berlin: not yet quiet
		{berlin, "2026-12-01T21:00:00Z", "2026-12-02T06:00:00Z"}, // 22:00 Berlin: held to 07:00 next day
		{berlin, "2026-12-02T02:30:00Z", "2026-12-02T06:00:00Z"}, // 03:30 Berlin: held to 07:00 same day
		{berlin, "2026-12-02T06:00:00Z", "2026-12-02T06:00:00Z"}, // 07:00 Berlin: the window has ended
		{day, "2026-12-01T12:15:00Z", "2026-12-01T13:30:00Z"},
		{day, "2026-12-01T13:30:00Z", "2026-12-01T13:30:00Z"},
		{day, "2026-12-01T11:59:00Z", "2026-12-01T11:59:00Z"},
	} {
		if got := c.q.after(at(c.in)); !got.Equal(at(c.want)) {
			t.Errorf("%+v after %s = %s, want %s", c.q, c.in, got.Format(time.RFC3339), c.want)
		}
	}
}

func TestBackoffDoublesToTheCap(t *testing.T) {
	s := &Service{o: Options{RetryBase: 2 * time.Second, RetryMax: 10 * time.Minute}}
	prev := time.Duration(0)
	for attempt := 1; attempt <= 12; attempt++ {
		d := s.backoff(attempt)
		want := min(2*time.Second<<(attempt-1), 10*time.Minute)
		if d > want || d < want-want/10 {
			t.Fatalf("attempt %d: %s, want within a tenth below %s", attempt, d, want)
		}
		if attempt > 1 && want < 10*time.Minute && d <= prev/2 {
			t.Fatalf("attempt %d: %s does not back off from %s", attempt, d, prev)
		}
		prev = d
	}
	if first := s.backoff(1); first > 2*time.Second {
		t.Fatalf("the first retry waits %s; it should come within seconds", first)
	}
}

func TestMaskNeverShowsTheSecret(t *testing.T) {
	secret := NewWebhookSecret()
	m := mask(secret)
	if m == secret || len(m) > 16 || m[:6] != "whsec_" {
		t.Fatalf("mask %q of %q", m, secret)
	}
	if keep(m, secret) != secret || keep("", secret) != secret || keep("whsec_new", secret) != "whsec_new" {
		t.Fatal("keep: a mask or blank keeps the stored secret; a new value replaces it")
	}
}
