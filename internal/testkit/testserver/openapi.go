package testserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"

	"github.com/gatehouse-dev/gatehouse/api"
)

// ValidateOpenAPIEnv turns the OpenAPI check of every test client's traffic off when set
// to "0" or "off" (it is on by default).
const ValidateOpenAPIEnv = "GATEHOUSE_VALIDATE_OPENAPI"

// openAPIRouter parses the embedded document once per test binary: it is read-only
// after that, so every server's validator shares it.
var openAPIRouter = sync.OnceValues(func() (routers.Router, error) {
	doc, err := api.Load()
	if err != nil {
		return nil, err
	}
	doc.Servers = nil // match paths on any host (test servers listen on random ports)
	return gorillamux.NewRouter(doc)
})

// openAPIValidator is an http.RoundTripper that checks each /v1 exchange against the
// described API (api/openapi.yaml):
//
//   - the route must be in the document — a request to a route it lacks must be refused
//     (404 or 405 with the error envelope);
//   - a request the document calls invalid (parameters, content type, body schema)
//     must be refused with a 4xx: the server may not accept what the document forbids;
//   - the response status must be listed for the operation, its headers must match,
//     and a JSON body must match the status's schema. Bodies of other media types
//     (text/event-stream, CSV, JSON Lines) are checked for a listed media type only;
//     an empty body with no Content-Type (the hooks' "no verdict") skips the body check.
//
// Violations go to the test that made the request when the request carries a sink
// (Client.Do and friends), otherwise to the test that started the server.
type openAPIValidator struct {
	base   http.RoundTripper
	router routers.Router

	mu         sync.Mutex
	violations []string
}

type violationSinkKey struct{}

// violationSink collects the violations of one client call.
type violationSink struct {
	mu   sync.Mutex
	list []string
}

func (s *violationSink) add(v string) {
	s.mu.Lock()
	s.list = append(s.list, v)
	s.mu.Unlock()
}

// report fails t with every violation collected.
func (s *violationSink) report(t testing.TB) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, v := range s.list {
		t.Errorf("openapi: %s", v)
	}
}

func withViolationSink(ctx context.Context) (context.Context, *violationSink) {
	s := &violationSink{}
	return context.WithValue(ctx, violationSinkKey{}, s), s
}

// newOpenAPIValidator returns the validating transport for a server started by t, or
// nil when validation is switched off. Violations with no sink fail t when it ends.
func newOpenAPIValidator(t testing.TB) *openAPIValidator {
	t.Helper()
	switch strings.ToLower(os.Getenv(ValidateOpenAPIEnv)) {
	case "0", "off", "false", "no":
		return nil
	}
	router, err := openAPIRouter()
	if err != nil {
		t.Fatalf("openapi document: %v", err)
	}
	v := &openAPIValidator{base: http.DefaultTransport, router: router}
	t.Cleanup(func() {
		v.mu.Lock()
		defer v.mu.Unlock()
		for _, msg := range v.violations {
			t.Errorf("openapi: %s", msg)
		}
	})
	return v
}

func (v *openAPIValidator) violation(ctx context.Context, req *http.Request, status int, format string, a ...any) {
	msg := fmt.Sprintf("%s %s → %d: ", req.Method, req.URL.RequestURI(), status) + fmt.Sprintf(format, a...)
	if s, ok := ctx.Value(violationSinkKey{}).(*violationSink); ok {
		s.add(msg)
		return
	}
	v.mu.Lock()
	v.violations = append(v.violations, msg)
	v.mu.Unlock()
}

// RoundTrip sends req and checks the exchange.
func (v *openAPIValidator) RoundTrip(req *http.Request) (*http.Response, error) {
	if !strings.HasPrefix(req.URL.Path, "/v1/") {
		return v.base.RoundTrip(req)
	}
	var reqBody []byte
	if req.Body != nil && req.Body != http.NoBody {
		b, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		reqBody = b
		req = req.Clone(req.Context())
		req.Body = io.NopCloser(bytes.NewReader(b))
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }
	}
	resp, err := v.base.RoundTrip(req)
	if err != nil {
		return resp, err
	}
	ctx := req.Context()
	// What the validator reads of the request: a copy, so the one sent stays untouched.
	check := req.Clone(context.Background())
	check.Body = io.NopCloser(bytes.NewReader(reqBody))

	route, params, ferr := v.router.FindRoute(check)
	streamed := isEventStream(resp.Header)
	var respBody []byte
	if !streamed {
		b, rerr := io.ReadAll(resp.Body)
		resp.Body.Close()
		if rerr != nil {
			resp.Body = io.NopCloser(io.MultiReader(bytes.NewReader(b), errReader{rerr}))
			return resp, nil // the exchange broke off (a cancelled park): nothing to check
		}
		respBody = b
		resp.Body = io.NopCloser(bytes.NewReader(b))
	}
	if ferr != nil {
		v.checkUnrouted(ctx, check, resp, respBody, ferr)
		return resp, nil
	}
	in := &openapi3filter.RequestValidationInput{Request: check, PathParams: params, Route: route,
		Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc, MultiError: true}}
	if err := openapi3filter.ValidateRequest(context.Background(), in); err != nil && resp.StatusCode < 400 {
		v.violation(ctx, req, resp.StatusCode, "the server accepted a request the document calls invalid: %v", err)
	}
	opts := &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true}
	mt := mediaType(resp.Header)
	switch {
	case len(respBody) == 0 && mt == "" && !streamed:
		opts.ExcludeResponseBody = true
	case mt != "application/json":
		opts.ExcludeResponseBody = true
		if r := route.Operation.Responses.Status(resp.StatusCode); r != nil && r.Value != nil && r.Value.Content.Get(mt) == nil {
			v.violation(ctx, req, resp.StatusCode, "media type %q is not documented for this status", mt)
		}
	}
	out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: resp.StatusCode,
		Header: resp.Header, Options: opts}
	out.SetBodyBytes(respBody)
	if err := openapi3filter.ValidateResponse(context.Background(), out); err != nil {
		v.violation(ctx, req, resp.StatusCode, "response: %v\nbody: %s", err, clip(respBody))
	}
	return resp, nil
}

// checkUnrouted: a request to a route the document lacks must have been refused with
// the error envelope, never answered.
func (v *openAPIValidator) checkUnrouted(ctx context.Context, req *http.Request, resp *http.Response, body []byte, ferr error) {
	if errors.Is(ferr, routers.ErrMethodNotAllowed) && resp.StatusCode == http.StatusMethodNotAllowed {
		return
	}
	if resp.StatusCode != http.StatusNotFound && resp.StatusCode != http.StatusMethodNotAllowed {
		v.violation(ctx, req, resp.StatusCode, "the route is not in the document (%v)", ferr)
		return
	}
	if mediaType(resp.Header) != "application/json" {
		v.violation(ctx, req, resp.StatusCode, "an undocumented route's refusal is not the JSON error envelope")
		return
	}
	if err := errorSchema().VisitJSON(decodeAny(body), openapi3.EnableJSONSchema2020()); err != nil {
		v.violation(ctx, req, resp.StatusCode, "refusal is not the error envelope: %v", err)
	}
}

// errorSchema is the document's shared Error schema.
var errorSchema = sync.OnceValue(func() *openapi3.Schema {
	doc, err := api.Load()
	if err != nil {
		panic(err)
	}
	return doc.Components.Schemas["Error"].Value
})

func decodeAny(b []byte) any {
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		return string(b)
	}
	return out
}

func isEventStream(h http.Header) bool { return mediaType(h) == "text/event-stream" }

func mediaType(h http.Header) string {
	ct := h.Get("Content-Type")
	if ct == "" {
		return ""
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return ct
	}
	return mt
}

func clip(b []byte) string {
	if len(b) > 600 {
		return string(b[:600]) + "…"
	}
	return string(b)
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }
