package handlers_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"image/png"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/notify"
	"github.com/gatehouse-dev/gatehouse/internal/notify/push"
	"github.com/gatehouse-dev/gatehouse/internal/testkit/pushtest"
	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
)

// subscriptionJSON is what a browser's PushSubscription.toJSON() gives for sub.
func subscriptionJSON(sub notify.PushSubscription) map[string]any {
	return map[string]any{"endpoint": sub.Endpoint, "expirationTime": nil,
		"keys": map[string]any{"p256dh": sub.P256dh, "auth": sub.Auth}}
}

// TestPushSubscriptionsAPI: a browser's subscription is stored (201, the device without
// its keys), re-adding it is idempotent, bad keys and endpoints are 400s naming the
// field, a person has at most 20 devices, and only the owner removes one.
func TestPushSubscriptionsAPI(t *testing.T) {
	t.Parallel()
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		srv := testserver.Start(t, db.NewURL(t), "--auth", "header", "--notify-allow-private")
		svc := pushtest.NewService(t)
		c, bob := srv.Client(alice), srv.Client("bob@example.com")
		sub := svc.NewSubscription()

		r := c.Do(t, http.MethodPost, "/v1/me/push-subscriptions", subscriptionJSON(sub))
		if r.Status != http.StatusCreated {
			t.Fatalf("add: %d %s", r.Status, r.Body)
		}
		dev := r.JSON(t)
		id, _ := dev["id"].(string)
		if !strings.HasPrefix(id, "psub_") || dev["host"] != "127.0.0.1" || bytes.Contains(r.Body, []byte(sub.Auth)) {
			t.Fatalf("device = %s", r.Body)
		}
		if r := c.Do(t, http.MethodPost, "/v1/me/push-subscriptions", subscriptionJSON(sub)); r.Status != http.StatusCreated || r.JSON(t)["id"] != id {
			t.Fatalf("re-add: %d %s (want the same device %s)", r.Status, r.Body, id)
		}

		bad := func(mut func(m map[string]any), field string) {
			t.Helper()
			m := subscriptionJSON(svc.NewSubscription())
			mut(m)
			r := c.Do(t, http.MethodPost, "/v1/me/push-subscriptions", m)
			coreWantEnvelope(t, r, http.StatusBadRequest, "invalid_input")
			if msg := r.JSON(t)["error"].(map[string]any)["message"].(string); !strings.HasPrefix(msg, field+":") {
				t.Fatalf("message %q does not name %s", msg, field)
			}
		}
		keys := func(m map[string]any) map[string]any { return m["keys"].(map[string]any) }
		bad(func(m map[string]any) { m["endpoint"] = "" }, "endpoint")
		bad(func(m map[string]any) { m["endpoint"] = "ftp://push.example/x" }, "endpoint")
		bad(func(m map[string]any) { keys(m)["p256dh"] = "AAAA" }, "keys.p256dh")
		bad(func(m map[string]any) {
			keys(m)["p256dh"] = base64.RawURLEncoding.EncodeToString(append([]byte{4}, make([]byte, 64)...))
		}, "keys.p256dh")
		bad(func(m map[string]any) { keys(m)["auth"] = base64.RawURLEncoding.EncodeToString(make([]byte, 15)) }, "keys.auth")
		bad(func(m map[string]any) { keys(m)["auth"] = "!!!" }, "keys.auth")

		if r := bob.Do(t, http.MethodDelete, "/v1/me/push-subscriptions/"+id, nil); r.Status != http.StatusNotFound {
			t.Fatalf("bob removes alice's device: %d %s", r.Status, r.Body)
		}
		if r := c.Do(t, http.MethodDelete, "/v1/me/push-subscriptions/"+id, nil); r.Status != http.StatusNoContent {
			t.Fatalf("remove: %d %s", r.Status, r.Body)
		}
		coreWantEnvelope(t, c.Do(t, http.MethodDelete, "/v1/me/push-subscriptions/"+id, nil), http.StatusNotFound, "not_found")

		for i := range 20 {
			if r := c.Do(t, http.MethodPost, "/v1/me/push-subscriptions", subscriptionJSON(svc.NewSubscription())); r.Status != http.StatusCreated {
				t.Fatalf("device %d: %d %s", i, r.Status, r.Body)
			}
		}
		coreWantEnvelope(t, c.Do(t, http.MethodPost, "/v1/me/push-subscriptions", subscriptionJSON(svc.NewSubscription())),
			http.StatusBadRequest, "invalid_input")
	})
}

// TestPushSubscriptionNeedsHTTPS: without --notify-allow-private an endpoint must be
// https and public (Gatehouse will send requests there).
func TestPushSubscriptionNeedsHTTPS(t *testing.T) {
	t.Parallel()
	srv := testserver.Start(t, testserver.Databases(t)[0].NewURL(t), "--auth", "header")
	svc := pushtest.NewService(t)
	c := srv.Client(alice)
	for _, endpoint := range []string{svc.NewSubscription().Endpoint, "http://push.example.com/x", "https://10.1.2.3/x", "https://localhost/x"} {
		m := subscriptionJSON(svc.NewSubscription())
		m["endpoint"] = endpoint
		coreWantEnvelope(t, c.Do(t, http.MethodPost, "/v1/me/push-subscriptions", m), http.StatusBadRequest, "invalid_input")
	}
	m := subscriptionJSON(svc.NewSubscription())
	m["endpoint"] = "https://fcm.googleapis.com/fcm/send/abc"
	if r := c.Do(t, http.MethodPost, "/v1/me/push-subscriptions", m); r.Status != http.StatusCreated || r.JSON(t)["host"] != "fcm.googleapis.com" {
		t.Fatalf("https endpoint: %d %s", r.Status, r.Body)
	}
}

// TestPushToStoredSubscription: the server's VAPID keys survive a restart, and a push
// signed with them to a subscription stored through the API arrives decrypted.
func TestPushToStoredSubscription(t *testing.T) {
	t.Parallel()
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		u := db.NewURL(t)
		srv := testserver.Start(t, u, "--auth", "header", "--notify-allow-private")
		ctx := context.Background()
		keys, err := push.EnsureKeys(ctx, srv.App.Store)
		if err != nil {
			t.Fatal(err)
		}
		svc := pushtest.NewService(t)
		svc.ExpectVAPIDKey(keys.Public)
		if r := srv.Client(alice).Do(t, http.MethodPost, "/v1/me/push-subscriptions", subscriptionJSON(svc.NewSubscription())); r.Status != http.StatusCreated {
			t.Fatalf("add: %d %s", r.Status, r.Body)
		}
		srv.Stop()
		srv = testserver.Start(t, u, "--auth", "header", "--notify-allow-private")
		again, err := push.EnsureKeys(ctx, srv.App.Store)
		if err != nil || again != keys {
			t.Fatalf("keys after restart: %+v %v, want %+v", again, err, keys)
		}
		rows, err := srv.App.Store.ListPushSubscriptions(ctx, alice)
		if err != nil || len(rows) != 1 {
			t.Fatalf("stored subscriptions: %v %v", rows, err)
		}
		sub := notify.PushSubscription{ID: rows[0].ID, Endpoint: rows[0].Endpoint, P256dh: rows[0].P256dh, Auth: rows[0].Auth}
		ch := push.New(again, "https://gatehouse.example", notify.HTTPClient(true, 5*time.Second))
		m := &notify.Message{Kind: notify.KindCreated, Prompt: notify.Summary{ElicitationID: "elicit_x", Title: "Claude Code wants to run Bash"},
			ApproveURL: srv.URL + "/approve/a/b", Target: notify.Target{Push: &sub}}
		if _, err := ch.Send(ctx, m); err != nil {
			t.Fatal(err)
		}
		if got := svc.Next(t, 10*time.Second); got.JSON["title"] != "Claude Code wants to run Bash" || got.JSON["tag"] != "elicit_x" {
			t.Fatalf("received %s", got.Raw)
		}
	})
}

// TestServiceWorkerAndManifest: /sw.js is served from the root as JavaScript that is
// revalidated on every check; the manifest is valid JSON naming the start page and
// scope, and its icons are PNGs of the sizes it states; every page links it.
func TestServiceWorkerAndManifest(t *testing.T) {
	t.Parallel()
	srv := testserver.Start(t, testserver.Databases(t)[0].NewURL(t), "--auth", "header")
	get := func(path string) (*http.Response, []byte) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, srv.URL+path, nil)
		req.Header.Set("X-Forwarded-Email", alice)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp, body
	}
	resp, body := get("/sw.js")
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/javascript") ||
		resp.Header.Get("Cache-Control") != "no-cache" || !bytes.Contains(body, []byte("notificationclick")) {
		t.Fatalf("/sw.js: %d %v", resp.StatusCode, resp.Header)
	}
	resp, body = get("/manifest.webmanifest")
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/manifest+json" {
		t.Fatalf("manifest: %d %v", resp.StatusCode, resp.Header)
	}
	var m struct {
		Name, ShortName, StartURL, Scope, Display, ThemeColor, BackgroundColor string
		Icons                                                                  []struct{ Src, Sizes, Type, Purpose string }
	}
	dec := json.NewDecoder(bytes.NewReader(bytes.ReplaceAll(bytes.ReplaceAll(bytes.ReplaceAll(bytes.ReplaceAll(bytes.ReplaceAll(body,
		[]byte(`"short_name"`), []byte(`"ShortName"`)), []byte(`"start_url"`), []byte(`"StartURL"`)), []byte(`"theme_color"`), []byte(`"ThemeColor"`)),
		[]byte(`"background_color"`), []byte(`"BackgroundColor"`)), []byte(`"purpose"`), []byte(`"Purpose"`))))
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("manifest is not JSON: %v", err)
	}
	if m.Name != "Gatehouse" || m.ShortName == "" || m.StartURL != "/inbox" || m.Scope != "/" || m.Display != "standalone" ||
		m.ThemeColor == "" || m.BackgroundColor == "" {
		t.Fatalf("manifest = %+v", m)
	}
	purposes := map[string]bool{}
	for _, ic := range m.Icons {
		resp, body := get(ic.Src)
		if resp.StatusCode != http.StatusOK || ic.Type != "image/png" {
			t.Fatalf("icon %s: %d", ic.Src, resp.StatusCode)
		}
		img, err := png.Decode(bytes.NewReader(body))
		if err != nil {
			t.Fatalf("icon %s: %v", ic.Src, err)
		}
		if b := img.Bounds(); strconv.Itoa(b.Dx())+"x"+strconv.Itoa(b.Dy()) != ic.Sizes {
			t.Fatalf("icon %s is %v, manifest says %s", ic.Src, b.Size(), ic.Sizes)
		}
		purposes[ic.Sizes+" "+ic.Purpose] = true
	}
	if !purposes["192x192 any"] || !purposes["512x512 any"] || !purposes["512x512 maskable"] {
		t.Fatalf("icons: %v", purposes)
	}
	_, page := get("/inbox")
	doc := docOf(t, string(page))
	if href, _ := doc.Find(`link[rel="manifest"]`).Attr("href"); href != "/manifest.webmanifest" {
		t.Fatalf("inbox links manifest %q", href)
	}
	if touch, _ := doc.Find(`link[rel="apple-touch-icon"]`).Attr("href"); touch == "" {
		t.Fatal("no apple-touch-icon")
	} else if resp, body := get(touch); resp.StatusCode != http.StatusOK || len(body) == 0 {
		t.Fatalf("apple-touch-icon: %d", resp.StatusCode)
	}
	if doc.Find(`meta[name="theme-color"]`).Length() != 1 || doc.Find(`nav a[href="/settings/notifications"]`).Length() != 1 {
		t.Fatal("no theme-color or no Notifications nav entry")
	}
}

// TestNotificationsPage: /settings/notifications shows the settings form (CSRF
// checked), saves it, never shows a stored secret back and keeps it when its field is
// left empty; bad values re-render the form with the error next to the field; a
// device subscribed by the page's script is listed and removed from the page.
func TestNotificationsPage(t *testing.T) {
	t.Parallel()
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		srv := testserver.Start(t, db.NewURL(t), "--auth", "header", "--notify-allow-private")
		jar, _ := cookiejar.New(nil)
		b := &tokenBrowser{t: t, base: srv.URL, hc: &http.Client{Jar: jar,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
		keys, err := push.EnsureKeys(context.Background(), srv.App.Store)
		if err != nil {
			t.Fatal(err)
		}

		status, html := b.do(http.MethodGet, "/settings/notifications", nil)
		doc := docOf(t, html)
		csrf, _ := doc.Find(`[data-testid="notifications-form"] input[name="csrf"]`).Attr("value")
		vapid, _ := doc.Find(`[data-testid="notify-device"]`).Attr("data-vapid-key")
		if status != http.StatusOK || csrf == "" || vapid != keys.Public || doc.Find(`[data-testid="no-devices"]`).Length() != 1 ||
			doc.Find(`[data-testid="slack-unavailable"]`).Length() != 1 || doc.Find(`nav a[aria-current="page"]`).Text() != "Notifications" {
			t.Fatalf("GET: %d\n%s", status, html)
		}
		const token, secret = "tk_very_secret_token", "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
		form := url.Values{"csrf": {csrf}, "delay_seconds": {"30"}, "reminder_seconds": {"120"},
			"quiet_start": {"22:00"}, "quiet_end": {"07:00"}, "quiet_zone": {"Europe/Berlin"}, "push_enabled": {"true"},
			"ntfy_enabled": {"true"}, "ntfy_url": {"https://ntfy.sh/gatehouse-alice"}, "ntfy_token": {token},
			"webhook_enabled": {"true"}, "webhook_url": {"https://hooks.example.com/gh"}, "webhook_secret": {secret}}
		noCSRF := url.Values{}
		for k, v := range form {
			if k != "csrf" {
				noCSRF[k] = v
			}
		}
		if status, _ := b.do(http.MethodPost, "/settings/notifications", noCSRF); status != http.StatusForbidden {
			t.Fatalf("save without CSRF: %d", status)
		}
		if status, html := b.do(http.MethodPost, "/settings/notifications", form); status != http.StatusSeeOther {
			t.Fatalf("save: %d\n%s", status, html)
		}
		status, html = b.do(http.MethodGet, "/settings/notifications", nil)
		doc = docOf(t, html)
		val := func(sel string) string { v, _ := doc.Find(sel).Attr("value"); return v }
		if status != http.StatusOK || strings.Contains(html, token) || strings.Contains(html, secret) ||
			val(`input[name="delay_seconds"]`) != "30" || val(`input[name="reminder_seconds"]`) != "120" ||
			val(`input[name="quiet_start"]`) != "22:00" || val(`input[name="quiet_zone"]`) != "Europe/Berlin" ||
			val(`input[name="ntfy_url"]`) != "https://ntfy.sh/gatehouse-alice" ||
			doc.Find(`input[name="ntfy_enabled"][checked]`).Length() != 1 || doc.Find(`input[name="push_enabled"][checked]`).Length() != 1 ||
			!strings.HasPrefix(doc.Find(`input[name="ntfy_token"]`).AttrOr("placeholder", ""), "stored") ||
			doc.Find(`[data-testid="flash"]`).Length() != 1 {
			t.Fatalf("after save (secrets must not show): %d\n%s", status, html)
		}

		// Saved again with the secret fields empty: the stored secrets stay.
		form.Set("ntfy_token", "")
		form.Set("webhook_secret", "")
		form.Set("delay_seconds", "45")
		if status, _ := b.do(http.MethodPost, "/settings/notifications", form); status != http.StatusSeeOther {
			t.Fatalf("save again: %d", status)
		}
		stored, err := srv.App.Store.GetSettingsDoc(context.Background(), alice)
		if err != nil || !bytes.Contains(stored, []byte(token)) || !bytes.Contains(stored, []byte(secret)) || !bytes.Contains(stored, []byte(`"delay_seconds":45`)) {
			t.Fatalf("stored document %s (%v): want both secrets kept and the new delay", stored, err)
		}

		for _, c := range []struct{ field, value, errField string }{
			{"delay_seconds", "abc", "delay_seconds"},
			{"delay_seconds", "999999", "delay_seconds"},
			{"ntfy_url", "http://10.0.0.1:8080/topic/sub", "ntfy.url"},
			{"quiet_zone", "Mars/Olympus", "quiet_hours.time_zone"},
			{"webhook_secret", "not-a-secret", "webhook.secret"},
		} {
			bad := url.Values{}
			for k, v := range form {
				bad[k] = v
			}
			bad.Set(c.field, c.value)
			status, html := b.do(http.MethodPost, "/settings/notifications", bad)
			doc := docOf(t, html)
			if status != http.StatusUnprocessableEntity || doc.Find(`[data-testid="field-error"][data-field="`+c.errField+`"]`).Length() != 1 {
				t.Fatalf("%s=%q: %d, want 422 with an error at %s\n%s", c.field, c.value, status, c.errField, html)
			}
			if c.field == "delay_seconds" {
				if v, _ := doc.Find(`input[name="delay_seconds"]`).Attr("value"); v != c.value {
					t.Fatalf("the typed value %q is not shown back: %q", c.value, v)
				}
			}
		}

		// A webhook saved without a secret gets one, shown on this answer only.
		bob := newSettingsBrowser(t, srv.URL, "bob@example.com")
		_, html = bob.do(http.MethodGet, "/settings/notifications", nil)
		bobCSRF, _ := docOf(t, html).Find(`[data-testid="notifications-form"] input[name="csrf"]`).Attr("value")
		status, html = bob.do(http.MethodPost, "/settings/notifications", url.Values{"csrf": {bobCSRF},
			"webhook_enabled": {"true"}, "webhook_url": {"https://hooks.example.com/bob"}})
		made := docOf(t, html).Find(`[data-testid="webhook-secret"]`).Text()
		if status != http.StatusOK || !strings.HasPrefix(made, "whsec_") {
			t.Fatalf("webhook without a secret: %d\n%s", status, html)
		}
		if _, html := bob.do(http.MethodGet, "/settings/notifications", nil); strings.Contains(html, made) {
			t.Fatal("the generated secret shows again")
		}

		// The page's script posts the subscription as JSON with the CSRF token in a header.
		svc := pushtest.NewService(t)
		sub := subscriptionJSON(svc.NewSubscription())
		postDevice := func(tok string) (int, []byte) {
			raw, _ := json.Marshal(sub)
			req, _ := http.NewRequest(http.MethodPost, srv.URL+"/settings/notifications/devices", bytes.NewReader(raw))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("X-Forwarded-Email", alice)
			req.Header.Set("User-Agent", "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/142.0.0.0 Safari/537.36")
			if tok != "" {
				req.Header.Set("X-CSRF-Token", tok)
			}
			resp, err := b.hc.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			return resp.StatusCode, body
		}
		if status, body := postDevice(""); status != http.StatusForbidden || !bytes.Contains(body, []byte(`"forbidden"`)) {
			t.Fatalf("device without CSRF: %d %s", status, body)
		}
		if status, body := postDevice(csrf); status != http.StatusCreated || !bytes.Contains(body, []byte(`"name":"Chrome on Linux"`)) {
			t.Fatalf("device: %d %s", status, body)
		}
		status, html = b.do(http.MethodGet, "/settings/notifications", nil)
		doc = docOf(t, html)
		row := doc.Find(`[data-testid="device-row"]`)
		if row.Length() != 1 || row.Find(`[data-testid="device-name"]`).Text() != "Chrome on Linux" {
			t.Fatalf("device list: %d\n%s", status, html)
		}
		action, _ := row.Find("form").Attr("action")
		if status, _ := b.do(http.MethodPost, action, url.Values{"csrf": {"nope"}}); status != http.StatusForbidden {
			t.Fatalf("remove with a wrong CSRF token: %d", status)
		}
		if status, _ := b.do(http.MethodPost, action, url.Values{"csrf": {csrf}}); status != http.StatusSeeOther {
			t.Fatalf("remove: %d", status)
		}
		if _, html := b.do(http.MethodGet, "/settings/notifications", nil); docOf(t, html).Find(`[data-testid="no-devices"]`).Length() != 1 {
			t.Fatalf("device still listed:\n%s", html)
		}
	})
}

// settingsBrowser is one person's browser on the settings pages: a cookie jar, the
// identity header a trusted proxy adds, and no redirects followed.
type settingsBrowser struct {
	t          *testing.T
	base, user string
	hc         *http.Client
}

func newSettingsBrowser(t *testing.T, base, user string) *settingsBrowser {
	jar, _ := cookiejar.New(nil)
	return &settingsBrowser{t: t, base: base, user: user, hc: &http.Client{Jar: jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

func (b *settingsBrowser) do(method, path string, form url.Values) (int, string) {
	b.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, _ := http.NewRequest(method, b.base+path, body)
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	req.Header.Set("X-Forwarded-Email", b.user)
	resp, err := b.hc.Do(req)
	if err != nil {
		b.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(raw)
}
