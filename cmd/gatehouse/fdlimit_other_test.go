//go:build !linux

package main

import "fmt"

// nofileEnv: see fdlimit_test.go (the descriptor-exhaustion test runs on Linux only).
const nofileEnv = "GATEHOUSE_TEST_EXEC_NOFILE"

func execWithNofile(string) int {
	fmt.Println(nofileEnv + " is only used on Linux")
	return 1
}
