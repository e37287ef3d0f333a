// Package migrations embeds the versioned SQL schema, one directory per dialect.
// Files are applied in order by goose at start (one transaction per step).
package migrations

import "embed"

// FS holds sqlite/*.sql and postgres/*.sql.
//
//go:embed sqlite/*.sql postgres/*.sql
var FS embed.FS
