package models

import (
	"testing"
	"time"
)

// TestHookTimeout: a margin above the server's wait, capped at a week.
func TestHookTimeout(t *testing.T) {
	for _, tc := range []struct {
		wait   time.Duration
		secs   int64
		capped bool
	}{
		{100 * time.Millisecond, 31, false},
		{24 * time.Hour, 86430, false},
		{HookTimeoutMax - HookTimeoutMargin, 604800, false},
		{HookTimeoutMax, 604800, true},
	} {
		if secs, capped := (SettingsOptions{Wait: tc.wait}).HookTimeout(); secs != tc.secs || capped != tc.capped {
			t.Errorf("HookTimeout(%s) = %d, %v; want %d, %v", tc.wait, secs, capped, tc.secs, tc.capped)
		}
	}
}
