package api

import "testing"

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
