// Package termui is the harness's output for people on a terminal: the block of live lines
// at the bottom of a terminal that other text scrolls above ([Lines]), the progress bar of
// MCP servers' progress notifications ([Progress]), the spinner of the servers a command
// waits for at start-up ([Spinner]), the terminal's width and words wrapped to it.
//
// # Concurrency
//
// [Lines] and [Progress] are safe for concurrent use. A [Spinner] draws from a goroutine of
// its own, started by [StartSpinner] and ended by [Spinner.Stop].
package termui
