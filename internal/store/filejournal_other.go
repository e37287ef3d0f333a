//go:build !unix

package store

import "os"

// lockFile is a no-op where flock(2) is not available: run one server per database.
func lockFile(*os.File) error { return nil }
