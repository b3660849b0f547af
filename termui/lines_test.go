package termui

import (
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/host"
	"github.com/cordisgo/harness/plugins/mcpclient"
	"github.com/cordisgo/harness/testkit/screentest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestStartupSpinner(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		demo, gh := new(ctx.Scope), new(ctx.Scope)
		b := host.NewStatusBoard(nil)
		_ = b.Report(mcpclient.Status{Server: "demo", Scope: demo, Phase: mcpclient.PhaseConnecting, At: time.Now()})
		_ = b.Report(mcpclient.Status{Server: "gh", Scope: gh, Phase: mcpclient.PhaseConnecting, At: time.Now()})
		scr := screentest.New()
		term := &Lines{w: scr}
		sp := StartSpinner(b, term)

		time.Sleep(250 * time.Millisecond)
		synctest.Wait()
		if got := scr.Written(); got != "" {
			t.Fatalf("before %v the spinner drew %q", spinnerDelay, got)
		}
		time.Sleep(100 * time.Millisecond) // the tick at 300 ms
		synctest.Wait()
		if got, want := scr.Shows(), "⠹ demo: connecting, 0.3s\n⠹ gh: connecting, 0.3s"; got != want {
			t.Fatalf("at 350 ms the screen shows\n%s\nwant\n%s", got, want)
		}

		_ = b.Report(mcpclient.Status{Server: "demo", Scope: demo, Phase: mcpclient.PhaseConnected, At: time.Now()})
		_ = b.Report(mcpclient.Status{Server: "gh", Scope: gh, Phase: mcpclient.PhaseReconnecting, Attempt: 2, MaxAttempts: 10,
			Err: "connect: refused", StderrTail: "boom", At: time.Now()})
		time.Sleep(100 * time.Millisecond)
		synctest.Wait()
		if got, want := scr.Shows(), "⠸ gh: reconnecting (attempt 2 of 10), 0.4s"; got != want {
			t.Fatalf("after demo connected the screen shows\n%s\nwant\n%s", got, want)
		}

		// A log line goes above the spinner's lines, which are drawn again under it.
		_, _ = term.Write([]byte("WARN something\n"))
		if got, want := scr.Shows(), "WARN something\n⠸ gh: reconnecting (attempt 2 of 10), 0.4s"; got != want {
			t.Fatalf("after a log line the screen shows\n%s\nwant\n%s", got, want)
		}

		sp.Stop()
		if got, want := scr.Shows(), "WARN something\n"; got != want {
			t.Fatalf("after stop the screen shows %q, want %q", got, want)
		}
	})
}

func TestTermLinesCutToWidth(t *testing.T) {
	scr := screentest.New()
	term := &Lines{w: scr, columns: func() int { return 11 }}
	term.Draw("0123456789abc", "short")
	if got, want := scr.Shows(), "012345678…\nshort"; got != want {
		t.Fatalf("screen shows\n%s\nwant\n%s", got, want)
	}
	term.Draw("one")
	if got, want := scr.Shows(), "one"; got != want {
		t.Fatalf("redrawn with fewer lines the screen shows %q, want %q", got, want)
	}
}

// TestTermLinesHold: while the elicitation form holds the terminal the live lines are off the
// screen and their draws only recorded; log lines are written as they come; the last hold's
// end draws the latest lines again.
func TestTermLinesHold(t *testing.T) {
	scr := screentest.New()
	term := &Lines{w: scr}
	term.Draw("[####....] demo/slow")
	release := term.Hold()
	if got := scr.Shows(); got != "" {
		t.Fatalf("held, the screen shows %q", got)
	}
	inner := term.Hold()
	term.Draw("[######..] demo/slow")
	fmt.Fprint(scr, "Name [Ada] > ")
	if _, err := term.Write([]byte("\nWARN something\n")); err != nil {
		t.Fatal(err)
	}
	inner()
	if got, want := scr.Shows(), "Name [Ada] > \nWARN something\n"; got != want {
		t.Fatalf("while held the screen shows %q, want %q", got, want)
	}
	release()
	release()
	if got, want := scr.Shows(), "Name [Ada] > \nWARN something\n[######..] demo/slow"; got != want {
		t.Fatalf("after the hold the screen shows %q, want %q", got, want)
	}
}

// TestLinesWaitForTheLine: a draw while text written through the lines has left the cursor
// mid-line (a reasoning line being streamed) waits for that line to end, so the progress
// bar never erases it; the bar is drawn once the line ends, below it.
func TestLinesWaitForTheLine(t *testing.T) {
	scr := screentest.New()
	term := &Lines{w: scr}
	fmt.Fprint(term, "thinking about")
	term.Draw("[##......] demo/slow")
	if got, want := scr.Shows(), "thinking about"; got != want {
		t.Fatalf("mid-line, the screen shows %q, want %q", got, want)
	}
	fmt.Fprint(term, " it\n")
	if got, want := scr.Shows(), "thinking about it\n[##......] demo/slow"; got != want {
		t.Fatalf("after the line, the screen shows %q, want %q", got, want)
	}
	fmt.Fprint(term, "next")
	if got, want := scr.Shows(), "thinking about it\nnext"; got != want {
		t.Fatalf("a new partial line takes the bar's place: %q, want %q", got, want)
	}
}
