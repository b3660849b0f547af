// Package proctest runs a program under test as a process and reads the process table, for
// the tests that check how a harness process ends and what it leaves behind: a command
// started with its stderr read line by line (Start), and the live processes as Linux's
// /proc shows them (List, Descendants). Only _test.go files may import this package
// (internal/archtest checks it).
package proctest

import (
	"bufio"
	"io"
	"os/exec"
	"testing"
)

// maxLine bounds one line of a process's stderr (a log record with a long error).
const maxLine = 4 << 20

// Start starts cmd with its stdout discarded and calls line with each line of its stderr (the
// slice is valid during the call only), from one goroutine, until the stream ends. The
// returned channel then receives Wait's error: the stream is read to its end before Wait
// closes it. A process still running when the test ends is killed and waited for. Call it
// from the test's goroutine; line must not block for ever, or the process cannot be waited
// for.
func Start(t testing.TB, cmd *exec.Cmd, line func([]byte)) <-chan error {
	t.Helper()
	cmd.Stdout = io.Discard
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	waited := make(chan struct{})
	go func() {
		defer close(waited)
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), maxLine)
		for sc.Scan() {
			line(sc.Bytes())
		}
		exited <- cmd.Wait()
	}()
	t.Cleanup(func() {
		select {
		case <-waited:
		default:
			_ = cmd.Process.Kill()
			<-waited
			select {
			case err := <-exited:
				t.Logf("%s killed at clean-up: %v", cmd.Path, err)
			default: // the test had Wait's error
			}
		}
	})
	return exited
}
