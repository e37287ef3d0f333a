package handlers

import (
	"crypto/sha256"
	"crypto/subtle"

	"github.com/labstack/echo/v4"

	"github.com/gatehouse-dev/gatehouse/internal/auth"
	"github.com/gatehouse-dev/gatehouse/internal/errs"
)

// metricsBearer lets through only requests that send token (--metrics-token) as their
// bearer credential: the metrics say how busy the server is, who waits and how long,
// which is not for everyone who can reach the port. Anything else is a 401.
func metricsBearer(token string) echo.MiddlewareFunc {
	want := sha256.Sum256([]byte(token))
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			got, ok := auth.BearerToken(c.Request().Header.Values(echo.HeaderAuthorization))
			sum := sha256.Sum256([]byte(got))
			if !ok || subtle.ConstantTimeCompare(sum[:], want[:]) != 1 {
				c.Response().Header().Set("WWW-Authenticate", `Bearer realm="gatehouse metrics"`)
				return errs.Unauthorized("/metrics needs the metrics token (--metrics-token) as a bearer token")
			}
			return next(c)
		}
	}
}
