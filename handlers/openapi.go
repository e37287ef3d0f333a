package handlers

import (
	"bytes"
	"encoding/json"
	"html/template"
	"net/http"
	"sort"
	"strings"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/labstack/echo/v4"

	"github.com/gatehouse-dev/gatehouse/api"
)

// apiReference serves the described API: the OpenAPI document as JSON
// (GET /v1/openapi.json) and a server-rendered reference page built from it (GET /api).
// Both are readable without an identity — the document holds no data — and both are
// built once, on first use, from the document embedded in the binary.
type apiReference struct {
	css  string
	once sync.Once
	doc  []byte
	page []byte
	err  error
}

func newAPIReference(css string) *apiReference { return &apiReference{css: css} }

func (r *apiReference) build() {
	r.once.Do(func() {
		doc, err := api.Load()
		if err != nil {
			r.err = err
			return
		}
		if r.doc, r.err = json.Marshal(doc); r.err != nil {
			return
		}
		var buf bytes.Buffer
		if r.err = referenceTemplate.Execute(&buf, referenceOf(doc, r.css)); r.err == nil {
			r.page = buf.Bytes()
		}
	})
}

// document answers GET /v1/openapi.json.
func (r *apiReference) document(c echo.Context) error {
	if r.build(); r.err != nil {
		return r.err
	}
	c.Response().Header().Set("Cache-Control", "no-cache")
	return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, r.doc)
}

// showPage answers GET /api: every route with its parameters, body and statuses.
func (r *apiReference) showPage(c echo.Context) error {
	if r.build(); r.err != nil {
		return r.err
	}
	return c.HTMLBlob(http.StatusOK, r.page)
}

// The reference page's model.
type (
	refPage struct {
		Title, Version, Description, CSS string
		Operations                       []refOperation
		Schemas                          []refSchema
	}
	refOperation struct {
		Anchor, Method, Path, Summary, Description string
		Params                                     []refParam
		Body                                       []refContent
		BodyRequired                               bool
		Responses                                  []refResponse
	}
	refParam struct {
		Name, In, Type, Description string
		Required                    bool
	}
	refContent struct {
		MediaType string
		Schema    refSchemaUse
	}
	refSchemaUse struct {
		Name   string // a components schema, linked
		Inline string // otherwise the schema as JSON
	}
	refResponse struct {
		Status, Description string
		Content             []refContent
	}
	refSchema struct{ Name, Description, JSON string }
)

func referenceOf(doc *openapi3.T, css string) refPage {
	p := refPage{Title: doc.Info.Title, Version: doc.Info.Version, Description: doc.Info.Description, CSS: css}
	paths := doc.Paths.InMatchingOrder()
	sort.Strings(paths)
	for _, path := range paths {
		item := doc.Paths.Value(path)
		for _, method := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodDelete} {
			op := item.GetOperation(method)
			if op == nil {
				continue
			}
			o := refOperation{Anchor: op.OperationID, Method: method, Path: path, Summary: op.Summary, Description: op.Description}
			for _, pr := range append(append(openapi3.Parameters{}, item.Parameters...), op.Parameters...) {
				v := pr.Value
				o.Params = append(o.Params, refParam{Name: v.Name, In: v.In, Required: v.Required,
					Type: schemaType(v.Schema), Description: v.Description})
			}
			if op.RequestBody != nil && op.RequestBody.Value != nil {
				o.BodyRequired = op.RequestBody.Value.Required
				o.Body = contentsOf(op.RequestBody.Value.Content)
			}
			codes := make([]string, 0, op.Responses.Len())
			for code := range op.Responses.Map() {
				codes = append(codes, code)
			}
			sort.Strings(codes)
			for _, code := range codes {
				rv := op.Responses.Value(code).Value
				desc := ""
				if rv.Description != nil {
					desc = *rv.Description
				}
				o.Responses = append(o.Responses, refResponse{Status: code, Description: desc, Content: contentsOf(rv.Content)})
			}
			p.Operations = append(p.Operations, o)
		}
	}
	names := make([]string, 0, len(doc.Components.Schemas))
	for name := range doc.Components.Schemas {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		s := doc.Components.Schemas[name].Value
		p.Schemas = append(p.Schemas, refSchema{Name: name, Description: s.Description, JSON: schemaJSON(s)})
	}
	return p
}

func contentsOf(content openapi3.Content) []refContent {
	types := make([]string, 0, len(content))
	for mt := range content {
		types = append(types, mt)
	}
	sort.Strings(types)
	out := make([]refContent, 0, len(types))
	for _, mt := range types {
		rc := refContent{MediaType: mt}
		if ref := content[mt].Schema; ref != nil {
			if name, ok := strings.CutPrefix(ref.Ref, "#/components/schemas/"); ok {
				rc.Schema.Name = name
			} else if ref.Value != nil {
				rc.Schema.Inline = schemaJSON(ref.Value)
			}
		}
		out = append(out, rc)
	}
	return out
}

func schemaType(ref *openapi3.SchemaRef) string {
	if ref == nil || ref.Value == nil || ref.Value.Type == nil {
		return ""
	}
	t := strings.Join(ref.Value.Type.Slice(), " | ")
	if len(ref.Value.Enum) > 0 {
		vals := make([]string, len(ref.Value.Enum))
		for i, v := range ref.Value.Enum {
			b, _ := json.Marshal(v)
			vals[i] = string(b)
		}
		t += " (" + strings.Join(vals, ", ") + ")"
	}
	return t
}

func schemaJSON(s *openapi3.Schema) string {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return ""
	}
	return string(b)
}

// referenceTemplate is the /api page: plain HTML and the app's own stylesheet, no
// scripts, so it works under the pages' Content-Security-Policy and with JavaScript off.
var referenceTemplate = template.Must(template.New("api").Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}} — reference</title>
<link rel="stylesheet" href="{{.CSS}}">
</head>
<body>
<main class="api-reference" data-testid="api-reference">
<h1>{{.Title}} <small>v{{.Version}}</small></h1>
<p><a href="/v1/openapi.json">OpenAPI document (JSON)</a></p>
<pre class="api-description">{{.Description}}</pre>
<nav><h2>Routes</h2><ul>
{{range .Operations}}<li><a href="#{{.Anchor}}"><code>{{.Method}} {{.Path}}</code></a> — {{.Summary}}</li>
{{end}}</ul></nav>
{{range .Operations}}
<section id="{{.Anchor}}" data-testid="operation" data-method="{{.Method}}" data-path="{{.Path}}">
<h2><code>{{.Method}} {{.Path}}</code></h2>
<p>{{.Summary}}</p>
{{if .Description}}<pre class="api-description">{{.Description}}</pre>{{end}}
{{if .Params}}<h3>Parameters</h3>
<table><thead><tr><th>name</th><th>in</th><th>type</th><th>required</th><th>description</th></tr></thead><tbody>
{{range .Params}}<tr><td><code>{{.Name}}</code></td><td>{{.In}}</td><td>{{.Type}}</td><td>{{if .Required}}yes{{else}}no{{end}}</td><td>{{.Description}}</td></tr>
{{end}}</tbody></table>{{end}}
{{if .Body}}<h3>Request body{{if .BodyRequired}} (required){{end}}</h3>
<ul>{{range .Body}}<li><code>{{.MediaType}}</code>: {{template "schema" .Schema}}</li>{{end}}</ul>{{end}}
<h3>Responses</h3>
<table><thead><tr><th>status</th><th>description</th><th>body</th></tr></thead><tbody>
{{range .Responses}}<tr data-testid="response" data-status="{{.Status}}"><td>{{.Status}}</td><td>{{.Description}}</td><td>{{range .Content}}<code>{{.MediaType}}</code>: {{template "schema" .Schema}} {{else}}none{{end}}</td></tr>
{{end}}</tbody></table>
</section>
{{end}}
<h2>Schemas</h2>
{{range .Schemas}}<section id="schema-{{.Name}}" data-testid="schema"><h3>{{.Name}}</h3>
{{if .Description}}<p>{{.Description}}</p>{{end}}
<pre>{{.JSON}}</pre></section>
{{end}}
</main>
</body>
</html>
{{define "schema"}}{{if .Name}}<a href="#schema-{{.Name}}">{{.Name}}</a>{{else if .Inline}}<pre>{{.Inline}}</pre>{{else}}any{{end}}{{end}}
`))
