package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/gatehouse-dev/gatehouse/static"
)

// serveServiceWorker serves the service worker at /sw.js. A worker's scope can be no
// wider than its script's path, so it lives at the root to control every page (and to
// show pushes for all of them). Browsers check for a new worker on navigation;
// no-cache makes that check reach the server, so a deploy reaches the phones too.
func (s *Server) serveServiceWorker(c echo.Context) error {
	return s.serveRootAsset(c, static.ServiceWorker, "application/javascript; charset=utf-8")
}

// serveManifest serves the web app manifest (the name, start page and icons a phone
// uses when Gatehouse is added to its home screen), revalidated like the worker.
func (s *Server) serveManifest(c echo.Context) error {
	return s.serveRootAsset(c, static.Manifest, "application/manifest+json")
}

func (s *Server) serveRootAsset(c echo.Context, name, contentType string) error {
	b, err := static.FS.ReadFile(name)
	if err != nil {
		return echo.ErrNotFound
	}
	h := c.Response().Header()
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Content-Type-Options", "nosniff")
	return c.Blob(http.StatusOK, contentType, b)
}
