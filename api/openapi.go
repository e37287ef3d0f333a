// Package api holds Gatehouse's described API: the OpenAPI 3.1 document of every /v1
// route (openapi.yaml), embedded in the binary. The server serves it as JSON and renders
// it as a reference page; the handler tests validate every request and response they
// make against it, so the document cannot drift from the code.
package api

import (
	_ "embed"
	"encoding/json"
	"fmt"

	"github.com/getkin/kin-openapi/openapi3"
)

// YAML is the document as written.
//
//go:embed openapi.yaml
var YAML []byte

// Load parses and validates the document (a fresh copy each call: callers may resolve
// or mutate it).
func Load() (*openapi3.T, error) {
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(YAML)
	if err != nil {
		return nil, fmt.Errorf("openapi: load: %w", err)
	}
	if err := doc.Validate(loader.Context); err != nil {
		return nil, fmt.Errorf("openapi: invalid document: %w", err)
	}
	return doc, nil
}

// JSON is the document as JSON (the body of GET /v1/openapi.json).
func JSON() ([]byte, error) {
	doc, err := Load()
	if err != nil {
		return nil, err
	}
	return json.Marshal(doc)
}
