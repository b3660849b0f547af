//go:build linux || darwin || dragonfly || freebsd || netbsd || openbsd

package app

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/elicitation"
	"github.com/cordisgo/harness/internal/ptytest"
)

// These tests run the harness (the test binary re-executed) in a pseudo-terminal, as a
// person would: `tools call mcp__demo__ask` makes the default profile's demo server ask, and
// the test answers the form the terminal shows.

// terminalRun is the harness running in a pseudo-terminal.
type terminalRun struct {
	*ptytest.Screen
	cmd *exec.Cmd
}

// askOnTerminalCmd starts `tools call mcp__demo__ask ARGS` in a pseudo-terminal with the extra
// environment and flags; done waits for its exit status.
func askOnTerminalCmd(t *testing.T, env []string, args string, flags ...string) (r terminalRun, done func() int) {
	t.Helper()
	cmd := harnessCmd(t, append(flags, "tools", "call", "mcp__demo__ask", args)...)
	cmd.Env = append(cmd.Env, env...)
	s, exit := startOnTerminal(t, cmd)
	return terminalRun{s, cmd}, exit
}

// askOnTerminal is askOnTerminalCmd for the screen only; exits waits for the exit status and
// fails the test, showing the screen, unless it is want.
func askOnTerminal(t *testing.T, env []string, args string, flags ...string) (s *ptytest.Screen, exits func(want int)) {
	t.Helper()
	r, done := askOnTerminalCmd(t, env, args, flags...)
	return r.Screen, func(want int) {
		t.Helper()
		if code := done(); code != want {
			t.Fatalf("exit %d, want %d; screen:\n%s", code, want, r.All())
		}
	}
}

// TestTerminalForm: the form shows each field with its default pre-filled; an invalid age
// is refused and asked again; the token is read without echo; the tool's result is the
// answer.
func TestTerminalForm(t *testing.T) {
	t.Parallel()
	s, exits := askOnTerminal(t, nil, "{}")
	s.Expect("demo asks: The demo server would like to know you better.")
	s.Expect("Name (required): What to call you\r\n  text, 1 to 40 characters\r\n  [Ada] > ")
	s.Type("\r")
	s.Expect("Age (required): In whole years\r\n  a whole number from 1 to 150\r\n  [36] > ")
	s.Type("200\r")
	s.Expect("Age: expected a whole number from 1 to 150, got 200")
	s.Expect("[36] > ")
	s.Type("42\r")
	s.Expect("    3. Blue\r\n  [Green] > ")
	s.Type("blue\r")
	s.Expect("[no] > ")
	s.Type("y\r")
	s.Expect("API token: Never shown; the tool reports its length only\r\n  text, hidden as you type\r\n  > ")
	s.Type("hunter2\r")
	s.Expect("Send? [Y/n/cancel] ")
	s.Type("\r")
	s.Expect("sent to demo")
	s.Expect("accept: age=42, color=blue, name=Ada, subscribe=true, token=7 characters")
	exits(ExitOK)
	if strings.Contains(s.All(), "hunter2") {
		t.Errorf("the secret was echoed:\n%s", s.All())
	}
}

// TestTerminalFormDeclineAndCancel: "n" at the end declines; Ctrl-C in the middle cancels the
// form, not the harness, which reports the tool's result and exits normally.
func TestTerminalFormDeclineAndCancel(t *testing.T) {
	t.Parallel()
	t.Run("decline", func(t *testing.T) {
		s, exits := askOnTerminal(t, nil, "{}")
		s.Expect("[Ada] > ")
		s.Type("\r\r\r\r\r") // every default, the token left out
		s.Expect("Send? [Y/n/cancel] ")
		s.Type("n\r")
		s.Expect("declined: demo was told no")
		s.Expect("decline")
		exits(ExitOK)
	})
	t.Run("ctrl-c", func(t *testing.T) {
		s, exits := askOnTerminal(t, nil, "{}")
		s.Expect("[Ada] > ")
		s.Type("\r")
		s.Expect("[36] > ")
		s.Type("\x03")
		s.Expect("cancelled: demo was told you made no choice")
		s.Expect("\ncancel")
		exits(ExitOK)
	})
}

// TestTerminalURL: URL mode shows the page, opens it with $BROWSER when the user agrees, and
// waits for the server's completion.
func TestTerminalURL(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	opened := filepath.Join(dir, "opened")
	browser := writeScript(t, dir, "browser", "#!/bin/sh\necho \"$1\" > "+opened+"\n")
	s, exits := askOnTerminal(t, []string{"BROWSER=" + browser}, `{"mode": "url"}`)
	s.Expect("demo asks you to open a page: Confirm on the demo page.\r\n  https://example.com/harness-demo/confirm?id=demo-")
	s.Expect("(on example.com)")
	s.Expect("Open it in the browser? [Y/n/cancel] ")
	s.Type("\r")
	s.Expect("waiting for demo to confirm...")
	s.Expect("demo confirmed: done")
	exits(ExitOK)
	if !strings.Contains(s.All(), "accept: confirmed demo-") {
		t.Errorf("no confirmed result; screen:\n%s", s.All())
	}
	got, err := os.ReadFile(opened)
	if err != nil || !strings.HasPrefix(string(got), "https://example.com/harness-demo/confirm?id=demo-") {
		t.Errorf("the browser was given %q (%v)", got, err)
	}
}

// TestTerminalPolicyDecline: --elicitation decline on a terminal offers servers nothing:
// the demo's ask fails saying the client does not support elicitation, and no form shows.
func TestTerminalPolicyDecline(t *testing.T) {
	t.Parallel()
	s, exits := askOnTerminal(t, nil, "{}", "--elicitation", "decline")
	s.Expect("does not support elicitation")
	exits(ExitFailure)
	if strings.Contains(s.All(), "Send?") {
		t.Errorf("a form was shown:\n%s", s.All())
	}
}

// TestTerminalFormTimeout: a question left unanswered for the server's elicitationTimeoutMs
// closes its form with a line saying so, and the server is told cancel.
func TestTerminalFormTimeout(t *testing.T) {
	s, exits := askOnTerminal(t, nil, "{}", "--set", "plugins.demo.config.elicitationTimeoutMs=300")
	s.Expect("[Ada] > ")
	s.Expect("demo's question was closed")
	s.Expect("\ncancel")
	exits(ExitOK)
}

// TestTerminalFormSignal: SIGTERM while a form is shown shuts the harness down cleanly: the
// form closes, the terminal's mode is restored, the exit status is 1 (interrupted).
func TestTerminalFormSignal(t *testing.T) {
	s, done := askOnTerminalCmd(t, nil, "{}")
	s.Expect("[Ada] > ")
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	s.Expect("demo's question was closed")
	if code := done(); code != ExitFailure {
		t.Fatalf("exit %d after SIGTERM; screen:\n%s", code, s.All())
	}
	if !s.Cooked() {
		t.Errorf("the terminal's mode was not restored; screen:\n%s", s.All())
	}
}

// TestProvideResponder: on a terminal the ask policy provides the terminal form (form and URL
// modes), except when stdin is serve --stdio's MCP stream; defaults provides a form-only
// responder; decline provides none.
func TestProvideResponder(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		flag     string
		protocol bool
		want     string
	}{
		{"ask", "", false, "[form url]"},
		{"ask, stdin is the protocol", "", true, "[]"},
		{"defaults", "defaults", false, "[form]"},
		{"decline", "decline", false, "[]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := ptytest.Open(t)
			a := testOptions().newInvocation(s.TTY, io.Discard, s.TTY, nil)
			a.logger = slog.New(slog.DiscardHandler)
			a.elicitation, a.stdinIsProtocol = tc.flag, tc.protocol
			root := ctx.New(ctx.Options{})
			defer func() { _ = root.Scope().Dispose(context.Background()) }()
			if err := a.provideResponder(root, nil); err != nil {
				t.Fatal(err)
			}
			if got := fmt.Sprint(elicitation.Modes(root)); got != tc.want {
				t.Errorf("modes %s, want %s", got, tc.want)
			}
		})
	}
}

// TestToolsListSameOnTerminal: tools list shows the same tools on a terminal as off one (a
// server that asks questions is offered elicitation either way, so it lists the same
// tools).
func TestToolsListSameOnTerminal(t *testing.T) {
	t.Parallel()
	s := ptytest.Open(t)
	cmd := harnessCmd(t, "tools", "list", "--local")
	s.Start(cmd)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("tools list on a terminal: %v\n%s", err, s.All())
	}
	off := run(t, nil, "tools", "list", "--local")
	off.expect(t, ExitOK, "mcp__demo__echo", "")
	names := func(out string) []string {
		var got []string
		for _, w := range strings.Fields(out) {
			if strings.HasPrefix(w, "mcp__") {
				got = append(got, w)
			}
		}
		return got
	}
	on := names(s.All())
	if len(on) == 0 || strings.Join(on, " ") != strings.Join(names(off.stdout), " ") {
		t.Errorf("on a terminal: %v\noff a terminal: %v", on, names(off.stdout))
	}
}

// TestRunOnTerminalAnswersForms: a host (harness run) on a terminal shows a server's form
// there, as docs/cli.md says, for a call another process makes through it; the answer
// reaches that call.
func TestRunOnTerminalAnswersForms(t *testing.T) {
	t.Parallel()
	cmd := harnessCmd(t, "run")
	s, exit := startOnTerminal(t, cmd)
	s.Expect("running; interrupt to stop")
	answered := make(chan result, 1) // the test's environment (testEnv): the host's
	go func() { answered <- run(t, nil, "tools", "call", "mcp__demo__ask", "{}") }()
	s.Expect("demo asks: The demo server would like to know you better.")
	s.Expect("[Ada] > ")
	for _, prompt := range []string{"[36] > ", "[Green] > ", "[no] > ", "  > ", "Send? [Y/n/cancel] "} {
		s.Type("\r")
		s.Expect(prompt)
	}
	s.Type("\r")
	s.Expect("sent to demo")
	(<-answered).expect(t, ExitOK, "accept: age=36, color=green, name=Ada, subscribe=false", "answering for the host at")
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if code := exit(); code != ExitOK {
		t.Fatalf("run exited %d; screen:\n%s", code, s.All())
	}
}
