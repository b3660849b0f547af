package app

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/host"
	"github.com/cordisgo/harness/plugins/mcpclient"
	"github.com/cordisgo/harness/testkit/mcptest"
)

// screen is a terminal for tests: it keeps what the lines written to it show, following
// the control sequences termLines writes (\r, \n, erase line, cursor up), and everything
// written. changed is signalled (without blocking) on every write. It is safe for
// concurrent use.
type screen struct {
	mu      sync.Mutex
	rows    []string // rows[len-1] is the cursor's row
	col     int
	raw     strings.Builder
	changed chan struct{}
}

func newScreen() *screen { return &screen{rows: []string{""}, changed: make(chan struct{}, 1)} }

func (s *screen) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.raw.Write(p)
	for text := string(p); text != ""; {
		switch {
		case strings.HasPrefix(text, "\x1b[K"):
			r := []rune(s.rows[len(s.rows)-1])
			s.rows[len(s.rows)-1] = string(r[:min(s.col, len(r))])
			text = text[3:]
		case strings.HasPrefix(text, "\x1b[1A"):
			if len(s.rows) > 1 {
				s.rows = s.rows[:len(s.rows)-1] // what is below the cursor was erased before
			}
			text = text[4:]
		case text[0] == '\r':
			s.col = 0
			text = text[1:]
		case text[0] == '\n':
			s.rows = append(s.rows, "")
			s.col = 0
			text = text[1:]
		default:
			n := strings.IndexAny(text, "\r\n\x1b")
			if n < 0 {
				n = len(text)
			}
			r := []rune(s.rows[len(s.rows)-1])
			add := []rune(text[:n])
			r = append(r[:min(s.col, len(r))], add...)
			s.rows[len(s.rows)-1] = string(r)
			s.col += len(add)
			text = text[n:]
		}
	}
	select {
	case s.changed <- struct{}{}:
	default:
	}
	return len(p), nil
}

// shows returns the screen's rows, the cursor's row last.
func (s *screen) shows() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Join(s.rows, "\n")
}

// written returns everything written to the screen.
func (s *screen) written() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.raw.String()
}

func TestStartupSpinner(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		demo, gh := new(ctx.Scope), new(ctx.Scope)
		b := host.NewStatusBoard(nil)
		_ = b.Report(mcpclient.Status{Server: "demo", Scope: demo, Phase: mcpclient.PhaseConnecting, At: time.Now()})
		_ = b.Report(mcpclient.Status{Server: "gh", Scope: gh, Phase: mcpclient.PhaseConnecting, At: time.Now()})
		scr := newScreen()
		term := &termLines{w: scr}
		sp := startSpinner(b, term)

		time.Sleep(250 * time.Millisecond)
		synctest.Wait()
		if got := scr.written(); got != "" {
			t.Fatalf("before %v the spinner drew %q", spinnerDelay, got)
		}
		time.Sleep(100 * time.Millisecond) // the tick at 300 ms
		synctest.Wait()
		if got, want := scr.shows(), "⠹ demo: connecting, 0.3s\n⠹ gh: connecting, 0.3s"; got != want {
			t.Fatalf("at 350 ms the screen shows\n%s\nwant\n%s", got, want)
		}

		_ = b.Report(mcpclient.Status{Server: "demo", Scope: demo, Phase: mcpclient.PhaseConnected, At: time.Now()})
		_ = b.Report(mcpclient.Status{Server: "gh", Scope: gh, Phase: mcpclient.PhaseReconnecting, Attempt: 2, MaxAttempts: 10,
			Err: "connect: refused", StderrTail: "boom", At: time.Now()})
		time.Sleep(100 * time.Millisecond)
		synctest.Wait()
		if got, want := scr.shows(), "⠸ gh: reconnecting (attempt 2 of 10), 0.4s"; got != want {
			t.Fatalf("after demo connected the screen shows\n%s\nwant\n%s", got, want)
		}

		// A log line goes above the spinner's lines, which are drawn again under it.
		_, _ = term.Write([]byte("WARN something\n"))
		if got, want := scr.shows(), "WARN something\n⠸ gh: reconnecting (attempt 2 of 10), 0.4s"; got != want {
			t.Fatalf("after a log line the screen shows\n%s\nwant\n%s", got, want)
		}

		sp.stop()
		if got, want := scr.shows(), "WARN something\n"; got != want {
			t.Fatalf("after stop the screen shows %q, want %q", got, want)
		}
	})
}

func TestTermLinesCutToWidth(t *testing.T) {
	scr := newScreen()
	term := &termLines{w: scr, columns: func() int { return 11 }}
	term.draw("0123456789abc", "short")
	if got, want := scr.shows(), "012345678…\nshort"; got != want {
		t.Fatalf("screen shows\n%s\nwant\n%s", got, want)
	}
	term.draw("one")
	if got, want := scr.shows(), "one"; got != want {
		t.Fatalf("redrawn with fewer lines the screen shows %q, want %q", got, want)
	}
}

// TestToolsListShowsSlowServers runs tools list on a terminal with a server that does not
// answer until the spinner has shown it: its line appears while the command waits and is
// gone once the server is connected; the tools are listed.
func TestToolsListShowsSlowServers(t *testing.T) {
	upstream := mcptest.Handler(mcptest.NewServer("slow"))
	gate := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-gate:
		case <-r.Context().Done():
			return
		}
		upstream.ServeHTTP(w, r)
	}))
	defer srv.Close()

	scr := newScreen()
	var stdout strings.Builder
	a := testOptions().newInvocation(strings.NewReader(""), &stdout, scr, nil)
	a.term = &termLines{w: scr} // stderr is a terminal
	cx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	code := make(chan int, 1)
	go func() { code <- a.run(cx, []string{"--http", "slow=" + srv.URL, "tools", "list"}) }()

	for !strings.Contains(scr.shows(), "slow: connecting, ") {
		select {
		case <-scr.changed:
		case <-cx.Done():
			t.Fatalf("no spinner line; stderr %q", scr.written())
		}
	}
	close(gate)
	if got := <-code; got != ExitOK {
		t.Fatalf("exit %d; stderr %q", got, scr.written())
	}
	if !strings.Contains(stdout.String(), "mcp__slow__echo") {
		t.Errorf("stdout lacks the slow server's tools:\n%s", stdout.String())
	}
	if got := scr.shows(); strings.Contains(got, "slow:") {
		t.Errorf("the spinner's line is still on screen:\n%s", got)
	}
}
