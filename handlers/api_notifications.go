package handlers

import (
	"context"

	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/gatehouse-dev/gatehouse/internal/auth"
	"github.com/gatehouse-dev/gatehouse/internal/errs"
	"github.com/gatehouse-dev/gatehouse/internal/notify"
	"github.com/gatehouse-dev/gatehouse/views"
)

// notifyService returns the notifications use case, or a 404 when this server has none.
func (s *Server) notifyService() (*notify.Service, error) {
	if s.notify == nil {
		return nil, errs.NotFound("notifications are not enabled on this server")
	}
	return s.notify, nil
}

// getNotificationSettings is GET /v1/me/notifications: the caller's settings document,
// secrets masked.
func (s *Server) getNotificationSettings(c echo.Context) error {
	svc, err := s.notifyService()
	if err != nil {
		return err
	}
	st, err := svc.Settings(c.Request().Context(), userOf(c))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, st)
}

// putNotificationSettings is PUT /v1/me/notifications: replaces the caller's settings
// (SPEC §11); 400 naming the field for bad values.
func (s *Server) putNotificationSettings(c echo.Context) error {
	svc, err := s.notifyService()
	if err != nil {
		return err
	}
	body, err := readBody(c)
	if err != nil {
		return err
	}
	in, err := notify.ParseSettings(body)
	if err != nil {
		return err
	}
	st, err := svc.PutSettings(c.Request().Context(), userOf(c), in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, st)
}

// listDeliveries is GET /v1/sessions/{sid}/elicitations/{eid}/notifications: how the
// prompt's notifications went, for whoever may answer it.
func (s *Server) listDeliveries(c echo.Context) error {
	svc, err := s.notifyService()
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	sess, err := s.sessions.Authorize(ctx, userOf(c), c.Param("sid"), auth.Read)
	if err != nil {
		return err
	}
	row, err := s.elicit.GetInSession(ctx, sess.ID, c.Param("eid"))
	if err != nil {
		return err
	}
	out, err := svc.Deliveries(ctx, userOf(c), row.ID)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"notifications": out})
}

// deliveryRows is the Notifications panel of the given prompts as viewer sees it (none
// without notify).
func (s *Server) deliveryRows(ctx context.Context, viewer string, eids ...string) ([]views.DeliveryRow, error) {
	if s.notify == nil || len(eids) == 0 {
		return nil, nil
	}
	ds, err := s.notify.Deliveries(ctx, viewer, eids...)
	if err != nil {
		return nil, err
	}
	out := make([]views.DeliveryRow, len(ds))
	for i, d := range ds {
		out[i] = views.DeliveryRow{ElicitationID: d.ElicitationID, Person: d.Person, Channel: d.Channel, Kind: d.Kind,
			State: d.State, Attempts: d.Attempts, LastError: d.LastError, DeliveredAt: d.DeliveredAt, NextAttempt: d.NextAttemptAt}
	}
	return out, nil
}
