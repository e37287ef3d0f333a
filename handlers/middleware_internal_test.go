package handlers

import (
	"bytes"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestAccessLogLevels: at the default level the access log says what happened — every
// write and every refusal — while successful reads (pages, polls, health checks),
// most of the traffic, go to debug; a 5xx is a warning.
func TestAccessLogLevels(t *testing.T) {
	for _, c := range []struct {
		method string
		status int
		want   string // the level written, "" for none at info
	}{
		{http.MethodGet, http.StatusOK, ""},
		{http.MethodHead, http.StatusOK, ""},
		{http.MethodGet, http.StatusNotModified, ""},
		{http.MethodGet, http.StatusNotFound, "INFO"},
		{http.MethodGet, http.StatusForbidden, "INFO"},
		{http.MethodPost, http.StatusOK, "INFO"},
		{http.MethodDelete, http.StatusNoContent, "INFO"},
		{http.MethodPost, http.StatusUnprocessableEntity, "INFO"},
		{http.MethodGet, http.StatusInternalServerError, "WARN"},
	} {
		var buf bytes.Buffer
		s := &Server{log: slog.New(slog.NewTextHandler(&buf, nil))} // the default level: info
		s.logRequest(logLine{method: c.method, path: "/x"}, c.status, time.Now(), isRead(c.method))
		got := buf.String()
		switch {
		case c.want == "" && got != "":
			t.Errorf("%s %d logged at info: %s", c.method, c.status, got)
		case c.want != "" && !strings.Contains(got, "level="+c.want):
			t.Errorf("%s %d logged %q, want level %s", c.method, c.status, got, c.want)
		}
	}
}
