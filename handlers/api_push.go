package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/gatehouse-dev/gatehouse/internal/errs"
	"github.com/gatehouse-dev/gatehouse/internal/notify"
)

// addPushSubscription is POST /v1/me/push-subscriptions with a browser's
// PushSubscription.toJSON(): 201 with the device (never its keys). Subscribing the same
// endpoint again answers the device already stored.
func (s *Server) addPushSubscription(c echo.Context) error {
	svc, err := s.notifyService()
	if err != nil {
		return err
	}
	var in notify.PushSubscriptionInput
	if err := bindJSON(c, &in); err != nil {
		return err
	}
	in.UserAgent = c.Request().UserAgent()
	d, err := svc.AddPushSubscription(c.Request().Context(), userOf(c), in)
	if err != nil {
		return err
	}
	s.log.Info("push subscription added", "device_id", d.ID, "push_host", d.Host, "user", userOf(c))
	return c.JSON(http.StatusCreated, d)
}

// removePushSubscription is DELETE /v1/me/push-subscriptions/:id: 204; the device gets
// no more notifications. Someone else's device is not found.
func (s *Server) removePushSubscription(c echo.Context) error {
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
	s.log.Info("push subscription removed", "device_id", c.Param("id"), "user", userOf(c))
	return c.NoContent(http.StatusNoContent)
}
