package handlers

import (
	"bytes"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/labstack/echo/v4"
)

// storableInput refuses, before any handler runs, a request whose path, query (names
// and values) or form body (application/x-www-form-urlencoded or multipart/form-data:
// field names, values and file names) is not UTF-8 or holds a NUL byte — a 400 with the
// error envelope on the API, the error page in a browser. Postgres cannot store NUL in
// TEXT and refuses invalid UTF-8 while SQLite takes both, so without this one check such
// a value would be a 500 on one database and stored on the other, on whichever route
// passes it to a query; JSON bodies are held to the same rule where they are read
// (storableText).
//
// A form body is read here (it is already capped by the body limit) and handed on
// unchanged, so handlers that read the raw body (a signed Slack interaction) see the
// same bytes.
func (s *Server) storableInput(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		if !storable(r.URL.Path) {
			return bad("path", "must be UTF-8 text without NUL (%%00) bytes")
		}
		if r.URL.RawQuery != "" {
			q, err := url.ParseQuery(r.URL.RawQuery)
			if err != nil {
				return bad("query", "is not a well-formed query string")
			}
			if err := storableValues("query", q); err != nil {
				return err
			}
		}
		if err := storableForm(r); err != nil {
			return err
		}
		return next(c)
	}
}

// storable reports whether s is UTF-8 text without NUL.
func storable(s string) bool {
	return utf8.ValidString(s) && !strings.ContainsRune(s, 0)
}

// storableValues checks every name and value of a query or urlencoded form; where
// names the part of the request for the message.
func storableValues(where string, vals url.Values) error {
	for k, vs := range vals {
		if !storable(k) {
			return bad(where, "parameter names must be UTF-8 text without NUL (%%00) bytes")
		}
		for _, v := range vs {
			if !storable(v) {
				return bad(truncateRunes(k, 64), "must be UTF-8 text without NUL (%%00) bytes")
			}
		}
	}
	return nil
}

// storableForm checks a form body, if the request has one, and puts its bytes back
// for the handler.
func storableForm(r *http.Request) error {
	if r.Body == nil || r.Body == http.NoBody {
		return nil
	}
	mt, params, err := mime.ParseMediaType(r.Header.Get(echo.HeaderContentType))
	if err != nil || (mt != echo.MIMEApplicationForm && mt != echo.MIMEMultipartForm) {
		return nil
	}
	body, err := readAll(r.Body)
	r.Body = replay(body, err)
	if err != nil {
		return nil // too large, client gone: the handler meets the same error where it reads
	}
	if mt == echo.MIMEApplicationForm {
		vals, err := url.ParseQuery(string(body))
		if err != nil {
			return bad("form", "is not a well-formed form body")
		}
		return storableValues("form", vals)
	}
	return storableMultipart(body, params["boundary"])
}

// storableMultipart checks each part's field name, file name and — for a part that is
// not a file — its value.
func storableMultipart(body []byte, boundary string) error {
	if boundary == "" {
		return bad("form", "multipart body without a boundary")
	}
	mr := multipart.NewReader(bytes.NewReader(body), boundary)
	for {
		p, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			// textproto refuses a part header holding NUL or other control bytes.
			return bad("form", "is not a well-formed multipart body: its part headers, field and file names must be UTF-8 text without NUL bytes")
		}
		name, file := p.FormName(), p.FileName()
		if !storable(name) || !storable(file) {
			return bad("form", "field and file names must be UTF-8 text without NUL bytes")
		}
		if file != "" {
			continue // a file's content is the file's: stored, if ever, as bytes
		}
		v, err := io.ReadAll(p)
		if err != nil {
			return bad("form", "is not a well-formed multipart body")
		}
		if !storable(string(v)) {
			return bad(truncateRunes(name, 64), "must be UTF-8 text without NUL (%%00) bytes")
		}
	}
}
