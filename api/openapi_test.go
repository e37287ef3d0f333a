package api

import (
	"strings"
	"testing"
)

func TestDocumentLoads(t *testing.T) {
	doc, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	if !doc.IsOpenAPI31OrLater() {
		t.Fatalf("openapi %s: want 3.1", doc.OpenAPI)
	}
	if _, err := JSON(); err != nil {
		t.Fatal(err)
	}
}

// TestJSONKeeps31Keywords: the served JSON keeps the 3.1 (JSON Schema 2020-12) keywords
// the document uses.
func TestJSONKeeps31Keywords(t *testing.T) {
	b, err := JSON()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"unevaluatedProperties":false`, `"const":"response.elicitation_request"`, `"type":["string","null"]`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("served JSON lacks %s", want)
		}
	}
}
