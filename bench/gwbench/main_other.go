//go:build !unix

package main

import (
	"fmt"
	"os"
)

// main says that gwbench needs unix: it runs each gateway in a process group of its own and
// signals the group, and it measures the gateways' processes through Linux's /proc.
func main() {
	fmt.Fprintln(os.Stderr, "gwbench: runs on unix only (process groups, /proc)")
	os.Exit(2)
}
