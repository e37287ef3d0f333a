package handlers

import (
	"bytes"
	"encoding/json"
	"errors"
	"mime"
	"net/http"
	"unicode/utf8"

	"github.com/labstack/echo/v4"
)

// readBody reads the whole (already size-limited) request body and insists on a JSON
// content type, so that a form post or a stray text body is told so (415) instead of
// being half-parsed. A body with no content type at all is refused too: browsers send
// such a body cross-site without asking, and the API must not take orders from any web
// page the user happens to visit.
func readBody(c echo.Context) ([]byte, error) {
	ct := c.Request().Header.Get(echo.HeaderContentType)
	if ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || (mt != "application/json" && !isJSONSuffix(mt)) {
			return nil, echo.NewHTTPError(http.StatusUnsupportedMediaType, "send the body as application/json")
		}
	}
	body, err := readAll(c.Request().Body)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, echo.NewHTTPError(http.StatusRequestEntityTooLarge, "request body is too large")
		}
		var he *echo.HTTPError
		if errors.As(err, &he) {
			return nil, he
		}
		return nil, bad("", "could not read the request body")
	}
	if ct == "" && len(bytes.TrimSpace(body)) > 0 {
		return nil, echo.NewHTTPError(http.StatusUnsupportedMediaType, "send the body as application/json (Content-Type header)")
	}
	if err := storableText(body); err != nil {
		return nil, err
	}
	return body, nil
}

// storableText refuses bodies the databases cannot hold the same way: text that is not
// UTF-8 (JSON must be), and strings with the escape \u0000 — Postgres TEXT and JSONB
// cannot store U+0000 while SQLite can, so without this check the same request would be
// a 201 on one database and a 500 on the other. Rejecting beats silently rewriting, as
// tool inputs are echoed back to the agent.
func storableText(body []byte) error {
	if !utf8.Valid(body) {
		return bad("", "body is not valid UTF-8")
	}
	for i := 0; i < len(body); i++ {
		if body[i] != '\\' {
			continue
		}
		if i+6 <= len(body) && body[i+1] == 'u' && string(body[i+2:i+6]) == "0000" {
			return bad("", "strings must not contain NUL (\\u0000)")
		}
		i++ // skip the escaped character: \\u0000 in JSON text is a backslash, then "u0000"
	}
	return nil
}

func isJSONSuffix(mt string) bool {
	return len(mt) > 5 && mt[len(mt)-5:] == "+json"
}

// bindJSON reads a JSON object body into v with clear 400s for malformed JSON and
// wrong types.
func bindJSON(c echo.Context, v any) error {
	body, err := readBody(c)
	if err != nil {
		return err
	}
	return decodeJSON(body, v)
}

func decodeJSON(body []byte, v any) error {
	body = bytes.TrimSpace(body)
	if len(body) == 0 || body[0] != '{' {
		return bad("", "body must be a JSON object")
	}
	if err := json.Unmarshal(body, v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return bad(te.Field, "has the wrong type (want %s)", te.Type)
		}
		return bad("", "body is not valid JSON")
	}
	return nil
}
