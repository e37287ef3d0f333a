package uitest

import (
	"bytes"
	"context"
	"fmt"
	"image/png"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/gatehouse-dev/gatehouse/internal/auth"
	"github.com/gatehouse-dev/gatehouse/internal/notify/push"
	"github.com/gatehouse-dev/gatehouse/internal/notify/pushtest"
	"github.com/gatehouse-dev/gatehouse/internal/testserver"
)

// TestPushNotifyThisDevice: in a real browser the manifest loads and parses with its
// icons, "Notify this device" registers the service worker at scope "/" (it becomes
// active), subscribes with the server's VAPID key, and the server stores the
// subscription and lists the device.
func TestPushNotifyThisDevice(t *testing.T) {
	srv := testserver.Start(t, "sqlite://"+t.TempDir()+"/gatehouse.db", "--notify-allow-private", "true")
	tb := newTab(t, srv)
	pushSvc := pushtest.NewService(t)
	sub := pushSvc.NewSubscription()
	keys, err := push.EnsureKeys(context.Background(), srv.App.Store)
	if err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(tb.ctx, stepTimeout)
	defer cancel()
	if _, err := chromedp.CallBrowser(ctx, browser.SetPermission, browser.SetPermissionParams{
		Permission: &browser.PermissionDescriptor{Name: "notifications"}, Setting: browser.PermissionSettingGranted, Origin: srv.URL,
	}); err != nil {
		t.Fatalf("grant notifications: %v", err)
	}
	// Headless Chromium has no push service it can reach (no internet here), so
	// PushManager.subscribe is replaced, before any page script runs, by one that
	// answers a subscription of the loopback test push service (real keys, as a
	// browser makes them). It records the applicationServerKey it was called with.
	if _, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: fmt.Sprintf(`
		(() => {
			if (!self.PushManager) { return; }
			const json = {endpoint: %q, expirationTime: null, keys: {p256dh: %q, auth: %q}};
			PushManager.prototype.getSubscription = async function () { return null; };
			PushManager.prototype.subscribe = async function (options) {
				const key = new Uint8Array(options.applicationServerKey);
				window.__applicationServerKey = btoa(String.fromCharCode(...key)).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
				window.__userVisibleOnly = options.userVisibleOnly === true;
				return {endpoint: json.endpoint, expirationTime: null, toJSON: () => json, unsubscribe: async () => true};
			};
		})();`, sub.Endpoint, sub.P256dh, sub.Auth)}); err != nil {
		t.Fatalf("inject subscribe: %v", err)
	}

	tb.open("/settings/notifications")

	// The manifest as Chromium parsed it. Its protocol reports display as
	// "kStandalone" and no short name (handlers' TestServiceWorkerAndManifest checks
	// the JSON itself).
	man, err := chromedp.Call(ctx, page.GetAppManifest, page.GetAppManifestParams{})
	if err != nil {
		t.Fatalf("get manifest: %v", err)
	}
	if len(man.Errors) > 0 || man.Manifest == nil {
		t.Fatalf("manifest %s: errors %+v\n%s", man.URL, man.Errors, man.Data)
	}
	m := man.Manifest
	if man.URL != srv.URL+"/manifest.webmanifest" || m.Name != "Gatehouse" || m.StartURL != srv.URL+"/inbox" ||
		m.Scope != srv.URL+"/" || !strings.HasSuffix(strings.ToLower(m.Display), "standalone") || m.ThemeColor == "" || m.BackgroundColor == "" || len(m.Icons) < 3 {
		t.Fatalf("manifest %s = %+v", man.URL, m)
	}
	for _, icon := range m.Icons {
		resp, err := http.Get(icon.URL)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		img, err := png.Decode(bytes.NewReader(body))
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("icon %s: %d %v", icon.URL, resp.StatusCode, err)
		}
		if got := fmt.Sprintf("%dx%d", img.Bounds().Dx(), img.Bounds().Dy()); got != icon.Sizes {
			t.Fatalf("icon %s is %s, the manifest says %s", icon.URL, got, icon.Sizes)
		}
	}

	if tb.text(`[data-testid="devices"]`) != "No devices yet." {
		t.Fatalf("devices before: %q", tb.text(`[data-testid="devices"]`))
	}
	tb.do(chromedp.Click(chromedp.CSS(`[data-testid="notify-device"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="device-row"]`)))
	if s := tb.text(`[data-testid="notify-device-status"]`); s != "This device will be notified." {
		t.Fatalf("status: %q", s)
	}

	// The worker is active and controls the whole origin.
	state := run(tb, chromedp.Evaluate[string](`navigator.serviceWorker.ready.then((reg) => new Promise((resolve) => {
		const w = reg.active;
		const done = () => resolve(reg.scope + ' ' + w.state + ' ' + w.scriptURL);
		if (w.state === 'activated') { done(); } else { w.addEventListener('statechange', () => w.state === 'activated' && done()); }
	}))`, chromedp.EvalAwaitPromise))
	if want := srv.URL + "/ activated " + srv.URL + "/sw.js"; state != want {
		t.Fatalf("service worker: %q, want %q", state, want)
	}
	if key := run(tb, chromedp.Evaluate[string](`window.__applicationServerKey`)); key != keys.Public {
		t.Fatalf("subscribed with key %q, want the server's %q", key, keys.Public)
	}
	if !tb.eval(`window.__userVisibleOnly`) {
		t.Fatal("subscribe was not called with userVisibleOnly: true")
	}

	// The server stored it, with the browser's keys, and lists it.
	rows, err := srv.App.Store.ListPushSubscriptions(context.Background(), auth.LocalUser)
	if err != nil || len(rows) != 1 || rows[0].Endpoint != sub.Endpoint || rows[0].P256dh != strings.TrimRight(sub.P256dh, "=") || rows[0].Auth != sub.Auth {
		t.Fatalf("stored subscriptions: %+v (%v)", rows, err)
	}
	if name := tb.text(`[data-testid="device-name"]`); !strings.Contains(name, "Chrom") {
		t.Fatalf("device name %q", name)
	}
	tb.screenshot("notifications-settings")
}
