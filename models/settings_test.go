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

// TestSettingsFilePath: the home, a directory variable replacing Dir, and a home
// variable standing in for the home (Dir still under it).
func TestSettingsFilePath(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	f := SettingsFile{Dir: ".gemini", HomeEnv: "GEMINI_CLI_HOME", Name: "settings.json"}
	if got := f.Path("/home/u", env(nil)); got != "/home/u/.gemini/settings.json" {
		t.Errorf("no variable: %s", got)
	}
	if got := f.Path("/home/u", env(map[string]string{"GEMINI_CLI_HOME": "/g"})); got != "/g/.gemini/settings.json" {
		t.Errorf("GEMINI_CLI_HOME: %s", got)
	}
	c := SettingsFile{Dir: ".codex", DirEnv: "CODEX_HOME", Name: "config.toml"}
	if got := c.Path("/home/u", env(map[string]string{"CODEX_HOME": "/c"})); got != "/c/config.toml" {
		t.Errorf("CODEX_HOME: %s", got)
	}
}
