package uitest

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
)

// stepTimeout bounds every wait in a browser test; a healthy step takes milliseconds.
const stepTimeout = 20 * time.Second

func chromiumPath() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// tab is one browser tab on a fresh Chromium profile, with the console recorded.
type tab struct {
	t    *testing.T
	ctx  context.Context
	base string

	mu      sync.Mutex
	console []string
}

// newTab starts headless Chromium for one test, or skips (fails under
// GATEHOUSE_REQUIRE_CHROMIUM=1) when it is not installed.
func newTab(t *testing.T, srv *testserver.Server) *tab {
	t.Helper()
	path := chromiumPath()
	if path == "" {
		if os.Getenv("GATEHOUSE_REQUIRE_CHROMIUM") == "1" {
			t.Fatal("Chromium is required here (GATEHOUSE_REQUIRE_CHROMIUM=1) but not installed: apt-get install -y chromium")
		}
		t.Skip("Chromium not found; install it to run the browser tests: apt-get install -y chromium")
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	bctx, cancelTab := chromedp.NewContext(actx)
	t.Cleanup(func() { cancelTab(); cancelAlloc() })
	// The first action starts the browser, bound to bctx (not to a step's timeout).
	if err := chromedp.Do(bctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	tb := &tab{t: t, ctx: bctx, base: srv.URL}
	msgs := chromedp.Console(bctx)
	go func() {
		for m, err := range msgs {
			if err != nil {
				return
			}
			tb.mu.Lock()
			tb.console = append(tb.console, string(m.Type)+": "+m.Text)
			tb.mu.Unlock()
		}
	}()
	t.Cleanup(tb.checkConsole)
	return tb
}

// do runs steps with the step timeout, failing the test on error.
func (tb *tab) do(steps ...chromedp.Action[chromedp.Void]) {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, stepTimeout)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		tb.t.Fatalf("browser: %v\nconsole:\n%s", err, tb.consoleText())
	}
}

func run[T any](tb *tab, a chromedp.Action[T]) T {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, stepTimeout)
	defer cancel()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		tb.t.Fatalf("browser: %v\nconsole:\n%s", err, tb.consoleText())
	}
	return v
}

// open navigates to a path of the server and waits for the page's main element.
func (tb *tab) open(path string) {
	tb.t.Helper()
	tb.do(chromedp.Navigate(tb.base+path), chromedp.WaitVisible(chromedp.CSS("main")))
}

// text reads the visible text of the first element matching a CSS selector.
func (tb *tab) text(sel string) string {
	tb.t.Helper()
	return strings.Join(strings.Fields(run(tb, chromedp.Text(chromedp.CSS(sel)))), " ")
}

// focus focuses the element matching sel, by selector each try: the inbox replaces its
// cards on every live update, so a node looked up once (chromedp.Focus) can be gone
// by the time it is focused.
func (tb *tab) focus(sel string) {
	tb.t.Helper()
	run(tb, chromedp.Poll[bool](`(() => { const el = document.querySelector(`+quote(sel)+`);
		if (!el) return false; el.focus(); return document.activeElement === el })()`,
		chromedp.WithPollingInterval(20*time.Millisecond), chromedp.WithPollingTimeout(stepTimeout)))
}

func (tb *tab) eval(js string) bool {
	tb.t.Helper()
	return run(tb, chromedp.Evaluate[bool](js))
}

// waitStreamOpen waits until the htmx SSE connection of element id is open, so an
// event published afterwards is one the page must handle live.
func (tb *tab) waitStreamOpen(id string) {
	tb.t.Helper()
	run(tb, chromedp.Poll[bool](`(() => { const el = document.getElementById(`+quote(id)+`);
		const d = el && el["htmx-internal-data"]; const s = d && d.sseEventSource;
		return !!s && s.readyState === 1 })()`, chromedp.WithPollingInterval(20*time.Millisecond), chromedp.WithPollingTimeout(stepTimeout)))
}

func quote(s string) string { return `"` + strings.ReplaceAll(s, `"`, `\"`) + `"` }

func (tb *tab) consoleText() string {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	return strings.Join(tb.console, "\n")
}

// checkConsole fails the test on uncaught exceptions and Content-Security-Policy
// violations: the pages must work under their own strict policy.
func (tb *tab) checkConsole() {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	for _, line := range tb.console {
		if strings.Contains(line, "Content Security Policy") || strings.HasPrefix(line, "exception") {
			tb.t.Errorf("browser console: %s", line)
		}
	}
}

// screenshot saves the current page at desktop (1280) and phone (390) widths.
func (tb *tab) screenshot(name string) {
	tb.t.Helper()
	dir := artifactsDir(tb.t)
	for _, vp := range []struct {
		suffix string
		w, h   int64
		mobile bool
	}{{"desktop", 1280, 900, false}, {"phone", 390, 844, true}} {
		opts := []chromedp.EmulateViewportOption{chromedp.EmulateScale(1)}
		if vp.mobile {
			opts = append(opts, chromedp.EmulateMobile)
		}
		tb.do(chromedp.EmulateViewport(vp.w, vp.h, opts...))
		png := run(tb, chromedp.FullScreenshot(100))
		if err := os.WriteFile(filepath.Join(dir, name+"-"+vp.suffix+".png"), png, 0o644); err != nil {
			tb.t.Fatalf("save screenshot: %v", err)
		}
	}
	tb.do(chromedp.EmulateReset())
}

// artifactsDir is $GATEHOUSE_ARTIFACTS, or artifacts/ at the module root.
func artifactsDir(t *testing.T) string {
	dir := os.Getenv("GATEHOUSE_ARTIFACTS")
	if dir == "" {
		root, err := moduleRoot()
		if err != nil {
			t.Fatalf("find module root: %v", err)
		}
		dir = filepath.Join(root, "artifacts")
	}
	dir = filepath.Join(dir, "screenshots")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatalf("artifacts dir: %v", err)
	}
	return dir
}

func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}
