package handlers

import (
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/gatehouse-dev/gatehouse/internal/errs"
	"github.com/gatehouse-dev/gatehouse/internal/notify"
	"github.com/gatehouse-dev/gatehouse/static"
	"github.com/gatehouse-dev/gatehouse/views"
)

// csrfHeader carries the CSRF token of the settings page's script, which posts JSON
// (a browser's push subscription) rather than a form.
const csrfHeader = "X-CSRF-Token"

// showNotificationsPage renders /settings/notifications: the person's settings and
// subscribed devices.
func (s *Server) showNotificationsPage(c echo.Context) error {
	svc, err := s.notifyService()
	if err != nil {
		return err
	}
	cur, err := svc.Settings(c.Request().Context(), userOf(c))
	if err != nil {
		return err
	}
	d, err := s.notificationsData(c, svc, cur, cur)
	if err != nil {
		return err
	}
	return s.render(c, http.StatusOK, views.Notifications(d))
}

// notificationsData fills the page from shown (what the form shows: the stored
// settings, or the ones just submitted) and stored (which secrets exist).
func (s *Server) notificationsData(c echo.Context, svc *notify.Service, shown, stored *notify.Settings) (views.NotificationsPage, error) {
	devices, err := svc.ListDevices(c.Request().Context(), userOf(c))
	if err != nil {
		return views.NotificationsPage{}, err
	}
	d := views.NotificationsPage{Chrome: s.chrome(c, "Notifications", "notifications"), CSRF: s.csrfToken(c),
		DelaySeconds: strconv.Itoa(shown.DelaySeconds), ReminderSeconds: strconv.Itoa(shown.ReminderSeconds),
		PushOn: shown.PushOn(), SlackOn: shown.SlackOn(), SlackAvailable: svc.SlackConfigured(),
		NtfyOn: shown.NtfyOn(), WebhookOn: shown.WebhookOn(), VAPIDKey: svc.VAPIDPublicKey(),
		DeviceScript: static.URL(static.NotifyDevice), SubscribeURL: "/settings/notifications/devices"}
	if q := shown.QuietHours; q != nil {
		d.QuietStart, d.QuietEnd, d.QuietZone = q.Start, q.End, q.TimeZone
	}
	if shown.Ntfy != nil {
		d.NtfyURL = shown.Ntfy.URL
	}
	if shown.Webhook != nil {
		d.WebhookURL = shown.Webhook.URL
	}
	d.NtfyStored = stored.Ntfy != nil && stored.Ntfy.Token != ""
	d.WebhookStored = stored.Webhook != nil && stored.Webhook.Secret != ""
	for _, dv := range devices {
		d.Devices = append(d.Devices, views.DeviceRow{ID: dv.ID, Name: dv.Name, Host: dv.Host, Created: dv.CreatedAt,
			RemoveURL: "/settings/notifications/devices/" + dv.ID + "/remove"})
	}
	return d, nil
}

// postNotificationsPage saves the settings form (post/redirect/get). Settings the
// service refuses re-render the form with the message next to the field it names.
func (s *Server) postNotificationsPage(c echo.Context) error {
	if err := s.checkCSRF(c); err != nil {
		return err
	}
	svc, err := s.notifyService()
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	stored, err := svc.Settings(ctx, userOf(c))
	if err != nil {
		return err
	}
	in, err := settingsFromForm(c, stored)
	var saved *notify.Settings
	if err == nil {
		saved, err = svc.PutSettings(ctx, userOf(c), in)
	}
	var inv *errs.InvalidInput
	if errors.As(err, &inv) {
		d, derr := s.notificationsData(c, svc, in, stored)
		if derr != nil {
			return derr
		}
		d.Errors = map[string]string{formField(inv.Field): inv.Msg}
		s.restoreTyped(c, &d)
		return s.render(c, http.StatusUnprocessableEntity, views.Notifications(d))
	}
	if err != nil {
		return err
	}
	s.log.Info("notification settings saved on page", "user", userOf(c))
	if w := saved.Webhook; w != nil && w.Secret != "" && !isMasked(w.Secret) {
		// The service made a signing secret and shows it in this answer only: so
		// does the page (no redirect, which would lose it; the page is no-store).
		d, err := s.notificationsData(c, svc, saved, saved)
		if err != nil {
			return err
		}
		d.NewWebhookSecret = w.Secret
		d.Chrome.Flash = "Notification settings saved."
		return s.render(c, http.StatusOK, views.Notifications(d))
	}
	s.setFlash(c, "Notification settings saved.")
	return s.redirect(c, "/settings/notifications")
}

// postTestNotification sends one test message to every channel the person saved and
// re-renders the page saying how it went on each (no redirect: the results are this
// answer's). It creates no prompt.
func (s *Server) postTestNotification(c echo.Context) error {
	if err := s.checkCSRF(c); err != nil {
		return err
	}
	svc, err := s.notifyService()
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	results, err := svc.SendTest(ctx, userOf(c))
	if err != nil {
		return err
	}
	cur, err := svc.Settings(ctx, userOf(c))
	if err != nil {
		return err
	}
	d, err := s.notificationsData(c, svc, cur, cur)
	if err != nil {
		return err
	}
	d.Tested = true
	for _, r := range results {
		d.TestResults = append(d.TestResults, views.TestRow{Channel: r.Channel, Target: r.Target, Err: r.Err})
	}
	return s.render(c, http.StatusOK, views.Notifications(d))
}

// formField maps a settings field to the form field showing its error; errors about
// the whole document show at the top.
func formField(field string) string {
	if field == "" || field == "body" {
		return "form"
	}
	return field
}

// restoreTyped shows the numbers and times as typed, so a value that did not parse
// is there to correct.
func (s *Server) restoreTyped(c echo.Context, d *views.NotificationsPage) {
	d.DelaySeconds, d.ReminderSeconds = c.FormValue("delay_seconds"), c.FormValue("reminder_seconds")
	d.QuietStart, d.QuietEnd, d.QuietZone = c.FormValue("quiet_start"), c.FormValue("quiet_end"), c.FormValue("quiet_zone")
}

// settingsFromForm turns the form into a settings document. A secret left empty keeps
// the stored one (stored holds it masked, which PutSettings takes as "unchanged").
// With a value error it still returns the document so far, for the form to show what
// was typed.
func settingsFromForm(c echo.Context, stored *notify.Settings) (*notify.Settings, error) {
	in := &notify.Settings{}
	field := func(name string) string { return strings.TrimSpace(c.FormValue(name)) }
	checked := func(name string) bool { return c.FormValue(name) == "true" }
	enabled := func(on bool) *bool { return &on }
	var firstErr error
	seconds := func(name string, into *int) {
		v := field(name)
		if v == "" {
			return
		}
		n, err := strconv.Atoi(v)
		if err != nil && firstErr == nil {
			firstErr = errs.Invalid(name, "want a whole number of seconds")
		}
		*into = n
	}
	seconds("delay_seconds", &in.DelaySeconds)
	seconds("reminder_seconds", &in.ReminderSeconds)
	if start, end, zone := field("quiet_start"), field("quiet_end"), field("quiet_zone"); start != "" || end != "" {
		in.QuietHours = &notify.QuietHours{Start: start, End: end, TimeZone: zone}
	}
	in.Push = &notify.PushSettings{Enabled: enabled(checked("push_enabled"))}
	if checked("slack_enabled") {
		in.Slack = &notify.SlackSettings{Enabled: enabled(true)}
	}
	if url := field("ntfy_url"); url != "" || checked("ntfy_enabled") {
		in.Ntfy = &notify.NtfySettings{Enabled: enabled(checked("ntfy_enabled")), URL: url,
			Token: keepSecret(field("ntfy_token"), ntfyToken(stored))}
	}
	if url := field("webhook_url"); url != "" || checked("webhook_enabled") {
		in.Webhook = &notify.WebhookSettings{Enabled: enabled(checked("webhook_enabled")), URL: url,
			Secret: keepSecret(field("webhook_secret"), webhookSecret(stored))}
	}
	return in, firstErr
}

// keepSecret is the secret to send: what was typed, else the stored (masked) value,
// which the service takes as "unchanged".
func keepSecret(typed, stored string) string {
	if typed != "" {
		return typed
	}
	return stored
}

// isMasked reports whether a secret is the service's mask of a stored one ("whsec_…Ab12").
func isMasked(secret string) bool { return strings.Contains(secret, "…") }

func ntfyToken(s *notify.Settings) string {
	if s.Ntfy == nil {
		return ""
	}
	return s.Ntfy.Token
}

func webhookSecret(s *notify.Settings) string {
	if s.Webhook == nil {
		return ""
	}
	return s.Webhook.Secret
}

// postDevice is POST /settings/notifications/devices: the "Notify this device"
// script's subscription, as JSON with the page's CSRF token in a header. It exists
// beside POST /v1/me/push-subscriptions because the API does not take a browser's
// sign-in cookie under --auth oidc. Answers are JSON (201 with the device, or the
// error envelope for a 4xx), as the script reads them.
func (s *Server) postDevice(c echo.Context) error {
	if err := s.checkCSRFHeader(c); err != nil {
		return jsonError(c, err)
	}
	svc, err := s.notifyService()
	if err != nil {
		return jsonError(c, err)
	}
	var in notify.PushSubscriptionInput
	if err := bindJSON(c, &in); err != nil {
		return jsonError(c, err)
	}
	in.UserAgent = c.Request().UserAgent()
	d, err := svc.AddPushSubscription(c.Request().Context(), userOf(c), in)
	if err != nil {
		return jsonError(c, err)
	}
	s.log.Info("push subscription added on page", "device_id", d.ID, "push_host", d.Host, "user", userOf(c))
	s.saveBrowser(c)
	return c.JSON(http.StatusCreated, d)
}

// jsonError answers a client error as the API's error envelope; server errors go to
// the error handler (logged, never shown).
func jsonError(c echo.Context, err error) error {
	status, code, msg := classify(err)
	if status >= 500 {
		return err
	}
	return c.JSON(status, envelope{Error: envelopeBody{Code: code, Message: msg}})
}

// checkCSRFHeader is checkCSRF for script requests: the token comes in the
// X-CSRF-Token header, which no other site can set on a request to Gatehouse.
func (s *Server) checkCSRFHeader(c echo.Context) error {
	return s.checkCSRFToken(c, c.Request().Header.Get(csrfHeader), "header")
}

// postRemoveDevice removes a device from the list.
func (s *Server) postRemoveDevice(c echo.Context) error {
	if err := s.checkCSRF(c); err != nil {
		return err
	}
	svc, err := s.notifyService()
	if err != nil {
		return err
	}
	ok, err := svc.RemovePushSubscription(c.Request().Context(), userOf(c), c.Param("id"))
	if err != nil {
		return err
	}
	if !ok {
		return errs.NotFound("no such device")
	}
	s.log.Info("push subscription removed on page", "device_id", c.Param("id"), "user", userOf(c))
	s.setFlash(c, "Device removed: it gets no more notifications.")
	return s.redirect(c, "/settings/notifications")
}
