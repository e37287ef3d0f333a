//go:build !race

package main

// raceBuild is false when the tests run without -race; see race_on_test.go.
const raceBuild = false
