//go:build race

package main

// raceBuild makes the child binary race-enabled when the tests are (make test runs
// -race), so data races in the real process's shutdown and restart paths are caught:
// the child then exits 66 and the exit-code assertions fail.
const raceBuild = true
