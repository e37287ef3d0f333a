package copilot

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/models"
)

// TestSettingsDefault: both events, preToolUse only for the tools that change
// something and with --answer-within a margin below its timeout (Copilot runs the tool
// when that hook times out); permissionRequest with no early deny.
func TestSettingsDefault(t *testing.T) {
	s, err := Agent{}.Settings(models.SettingsOptions{URL: "https://gh.example.com", Command: "/opt/gate house/gatehouse", TokenEnv: "GATEHOUSE_TOKEN", Wait: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Hooks struct {
			Pre []struct {
				Matcher string `json:"matcher"`
				Hooks   []hook `json:"hooks"`
			} `json:"preToolUse"`
			Perm []hook `json:"permissionRequest"`
		} `json:"hooks"`
	}
	if err := json.Unmarshal([]byte(s.Text), &got); err != nil {
		t.Fatalf("%v\n%s", err, s.Text)
	}
	base := `'/opt/gate house/gatehouse' hook copilot --url https://gh.example.com --token-env GATEHOUSE_TOKEN`
	if len(got.Hooks.Pre) != 1 || got.Hooks.Pre[0].Matcher != GatedTools || len(got.Hooks.Pre[0].Hooks) != 1 {
		t.Fatalf("preToolUse = %+v", got.Hooks.Pre)
	}
	if h := got.Hooks.Pre[0].Hooks[0]; h.Type != "command" || h.TimeoutSec != 3630 || h.Bash != base+" --answer-within 1h0m15s" {
		t.Errorf("preToolUse hook = %+v", h)
	}
	if len(got.Hooks.Perm) != 1 || got.Hooks.Perm[0] != (hook{Type: "command", Bash: base, TimeoutSec: 3630}) {
		t.Errorf("permissionRequest = %+v", got.Hooks.Perm)
	}
	if s.File.Path("/home/u", func(string) string { return "" }) != "/home/u/.copilot/settings.json" ||
		s.File.Path("/home/u", func(string) string { return "/ch" }) != "/ch/settings.json" || s.File.Format != models.FormatJSON {
		t.Errorf("file = %+v", s.File)
	}
}

// TestSettingsEvents: the person may install one event (named in either case); an
// unknown event or a bad option is refused naming the option.
func TestSettingsEvents(t *testing.T) {
	o := models.SettingsOptions{URL: "http://127.0.0.1:8080", Command: "gatehouse", Wait: time.Minute, Events: []string{"PermissionRequest"}}
	s, err := Agent{}.Settings(o)
	if err != nil || strings.Contains(s.Text, "preToolUse") || !strings.Contains(s.Text, `"permissionRequest"`) {
		t.Fatalf("%v\n%s", err, s.Text)
	}
	for _, bad := range []models.SettingsOptions{
		{URL: o.URL, Command: "gatehouse", Events: []string{"postToolUse"}},
		{URL: o.URL, Command: `gate"house`},
		{URL: o.URL, Command: "gatehouse", TokenEnv: "1X"},
	} {
		if _, err := (Agent{}).Settings(bad); err == nil || !strings.HasPrefix(err.Error(), "--") {
			t.Errorf("%+v: %v, want an error naming the option", bad, err)
		}
	}
}
