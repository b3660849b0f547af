//go:build linux || darwin || dragonfly || freebsd || netbsd || openbsd

package app

import (
	"errors"
	"os/exec"
	"strings"
	"testing"

	"github.com/cordisgo/harness/internal/ptytest"
)

// TestStartupSpinnerOnTerminal: `tools list` on a real (pseudo-)terminal with a server that
// takes a second to start shows that server's spinner line while it waits, and clears it
// before the tools are listed.
func TestStartupSpinnerOnTerminal(t *testing.T) {
	t.Parallel()
	s := ptytest.Open(t)
	cmd := harnessCmd(t, "--stdio", "slow="+selfCmd(t, "--start-delay", "1s"), "tools", "list")
	s.Start(cmd)
	s.Expect("slow: connecting, ")
	s.Expect("mcp__slow__echo")
	err := cmd.Wait()
	if _, ok := errors.AsType[*exec.ExitError](err); err != nil && !ok {
		t.Fatal(err)
	}
	if code := cmd.ProcessState.ExitCode(); code != ExitOK {
		t.Fatalf("exit %d; screen:\n%s", code, s.All())
	}
	all := s.All()
	table := strings.Index(all, "NAME")
	if table < 0 {
		t.Fatalf("no table; screen:\n%q", all)
	}
	// The last spinner frame is erased (\r, erase line) right before the table, and none
	// follows it.
	if !strings.HasSuffix(all[:table], "\r\x1b[K") {
		t.Errorf("the spinner's line was not cleared before the table; screen:\n%q", all)
	}
	if strings.Contains(all[table:], "connecting, ") {
		t.Errorf("a spinner line after the table; screen:\n%q", all)
	}
}
