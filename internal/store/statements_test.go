package store

import (
	"strings"
	"testing"
)

// TestPlaceholdersAreNumberedInOrder: a statement written with ? placeholders reaches
// Postgres with $1, $2, … in their order.
func TestPlaceholdersAreNumberedInOrder(t *testing.T) {
	for in, want := range map[string]string{
		"SELECT 1": "SELECT 1",
		"UPDATE t SET a = ?, b = ? WHERE c IN (?, ?)": "UPDATE t SET a = $1, b = $2 WHERE c IN ($3, $4)",
		strings.Repeat("?,", 11) + "?":                "$1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12",
	} {
		if got := numberPlaceholders(in); got != want {
			t.Errorf("numberPlaceholders(%q) = %q, want %q", in, got, want)
		}
	}
}
