package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/gatehouse-dev/gatehouse/views"
)

// showSessionsPage lists the sessions the person can see, each agent run with its
// sub-agents under it.
func (s *Server) showSessionsPage(c echo.Context) error {
	list, err := s.sessions.Tree(c.Request().Context(), userOf(c))
	if err != nil {
		return err
	}
	d := views.SessionsPage{Chrome: s.chrome(c, "Sessions", "sessions")}
	for _, it := range list {
		d.Sessions = append(d.Sessions, views.SessionRow{ID: it.Session.ID, Title: it.Session.Title, URL: "/sessions/" + it.Session.ID,
			Depth: it.Session.Depth, Pending: it.PendingCount, Created: it.Session.CreatedAt})
	}
	return s.render(c, http.StatusOK, views.Sessions(d))
}
