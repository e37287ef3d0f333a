package handlers_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
)

// unstorable are the two kinds of text no route may take: a NUL byte and bytes that
// are not UTF-8, as they travel in a URL.
var unstorable = []struct{ name, escaped, raw string }{
	{"NUL", "%00", "\x00"},
	{"invalid UTF-8", "%FF", "\xff"},
}

// badInputRequest is one request carrying unstorable text somewhere.
type badInputRequest struct {
	what, method, path, contentType string
	body                            []byte
}

// badInputRequests are the requests for one route of the route table: the bad text
// in each path parameter (or, for a route without one, its last segment), in a query
// value and name, and in a urlencoded and a multipart form value and name. ids fills
// the route's other parameters with real ones, so each request would otherwise reach
// the handler's database work.
func badInputRequests(r *echo.Route, ids map[string]string) []badInputRequest {
	method := r.Method
	if method == echo.RouteNotFound {
		method = http.MethodGet
	}
	segs := strings.Split(r.Path, "/")
	fill := func(bad int, val string) string {
		out := make([]string, len(segs))
		for i, s := range segs {
			switch {
			case i == bad:
				out[i] = "x" + val + "y"
			case strings.HasPrefix(s, ":"):
				out[i] = ids[s[1:]]
			case s == "*":
				out[i] = "app.css"
			default:
				out[i] = s
			}
		}
		return strings.Join(out, "/")
	}
	var params []int
	for i, s := range segs {
		if strings.HasPrefix(s, ":") || s == "*" {
			params = append(params, i)
		}
	}
	clean := fill(-1, "")
	var out []badInputRequest
	for _, u := range unstorable {
		if len(params) == 0 {
			out = append(out, badInputRequest{what: "path " + u.name, method: method, path: strings.TrimSuffix(clean, "/") + "/x" + u.escaped})
		}
		for _, i := range params {
			out = append(out, badInputRequest{what: "path parameter " + segs[i] + " " + u.name, method: method, path: fill(i, u.escaped)})
		}
		out = append(out,
			badInputRequest{what: "query value " + u.name, method: method, path: clean + "?person=a" + u.escaped + "b&format=jsonl"},
			badInputRequest{what: "query name " + u.name, method: method, path: clean + "?a" + u.escaped + "b=1"},
			badInputRequest{what: "form value " + u.name, method: method, path: clean, contentType: echo.MIMEApplicationForm,
				body: []byte("action=accept&title=a" + u.escaped + "b&_csrf=x")},
			badInputRequest{what: "form name " + u.name, method: method, path: clean, contentType: echo.MIMEApplicationForm,
				body: []byte("a" + u.escaped + "b=1")},
		)
		for _, inName := range []bool{false, true} {
			var buf bytes.Buffer
			mw := multipart.NewWriter(&buf)
			name, value := "title", "a"+u.raw+"b"
			if inName {
				name, value = "a"+u.raw+"b", "1"
			}
			h := textproto.MIMEHeader{"Content-Disposition": {`form-data; name="` + name + `"`}}
			pw, _ := mw.CreatePart(h)
			_, _ = pw.Write([]byte(value))
			_ = mw.Close()
			out = append(out, badInputRequest{what: fmt.Sprintf("multipart (in name: %v) %s", inName, u.name), method: method, path: clean,
				contentType: mw.FormDataContentType(), body: buf.Bytes()})
		}
	}
	return out
}

// TestUnstorableTextIsA400OnEveryRoute walks the whole route table (and the catch-all
// routes behind it) of a server in each auth mode that adds routes, on both databases:
// NUL or invalid UTF-8 in any path parameter, query name or value, or form name or
// value (urlencoded or multipart) is a 400 — the error envelope on the API, the error
// page in a browser — never a 5xx or a dropped connection.
func TestUnstorableTextIsA400OnEveryRoute(t *testing.T) {
	t.Parallel()
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		provider := testserver.StartOIDCProvider(t)
		servers := map[string]*testserver.Server{
			"auth none": testserver.Start(t, db.NewURL(t), "--metrics-token", strings.Repeat("m", 32)),
			"auth oidc": testserver.StartOIDC(t, db.NewURL(t), provider),
		}
		hc := &http.Client{Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		for mode, srv := range servers {
			ids := map[string]string{"sid": "conv_" + strings.Repeat("0", 32), "eid": "elicit_" + strings.Repeat("0", 32),
				"id": "x", "token": "x"}
			if mode == "auth none" {
				c := srv.Client("")
				ids["id"] = c.CreateAgent(t)
				ids["sid"] = c.CreateSession(t, ids["id"], "", "")
				ids["eid"] = openMCPForm(t, c, ids["sid"], "Deploy?", map[string]any{})
			}
			routes := srv.App.Echo.Routes()
			seen := 0
			for _, r := range routes {
				for _, br := range badInputRequests(r, ids) {
					seen++
					label := fmt.Sprintf("%s: %s %s, %s", mode, r.Method, r.Path, br.what)
					req, err := http.NewRequestWithContext(context.Background(), br.method, srv.URL+br.path, bytes.NewReader(br.body))
					if err != nil {
						t.Fatalf("%s: %v", label, err)
					}
					if br.contentType != "" {
						req.Header.Set("Content-Type", br.contentType)
					}
					resp, err := hc.Do(req)
					if err != nil {
						t.Errorf("%s: no answer (%v)", label, err)
						continue
					}
					body, err := io.ReadAll(resp.Body)
					resp.Body.Close()
					if err != nil {
						t.Errorf("%s: answer cut off (%v)", label, err)
						continue
					}
					if resp.StatusCode != http.StatusBadRequest {
						t.Errorf("%s: %d, want 400: %.200s", label, resp.StatusCode, body)
						continue
					}
					ct := resp.Header.Get("Content-Type")
					// The API's answers (the server's own rule, isPage): /v1/…, /healthz, /metrics.
					if p := resp.Request.URL.Path; strings.HasPrefix(p, "/v1/") || p == "/healthz" || p == "/metrics" {
						var env struct {
							Error struct{ Code, Message string }
						}
						if !strings.HasPrefix(ct, "application/json") || json.Unmarshal(body, &env) != nil ||
							env.Error.Code != "invalid_input" || env.Error.Message == "" {
							t.Errorf("%s: not the error envelope (%s): %.200s", label, ct, body)
						}
					} else if !strings.HasPrefix(ct, "text/html") || !strings.Contains(string(body), "must be UTF-8 text") {
						t.Errorf("%s: not the error page saying why (%s): %.200s", label, ct, body)
					}
				}
			}
			t.Logf("%s: %d routes, %d requests", mode, len(routes), seen)
			if r := srv.Client("").Do(t, http.MethodGet, "/healthz", nil); r.Status != http.StatusOK {
				t.Fatalf("%s: healthz after the bad input: %d", mode, r.Status)
			}
		}
	})
}
