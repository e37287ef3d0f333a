package testserver

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/gatehouse-dev/gatehouse/internal/store"
)

// OpenStore opens and migrates a store at url (a fresh SQLite file when url is ""),
// closed when the test ends — for tests of the domain below the HTTP layer.
func OpenStore(t testing.TB, url string) *store.Store {
	t.Helper()
	if url == "" {
		url = "sqlite://" + filepath.Join(t.TempDir(), "g.db")
	}
	st, err := store.Open(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.Migrate(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	return st
}
