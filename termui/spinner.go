package termui

import (
	"fmt"
	"time"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/host"
	"github.com/cordisgo/harness/plugins/mcpclient"
)

const (
	// spinnerDelay is how long a server may take to connect before the start-up spinner
	// shows it.
	spinnerDelay = 300 * time.Millisecond
	// spinnerTick is the spinner's redraw interval.
	spinnerTick = 100 * time.Millisecond
)

// spinnerFrames are the spinner's animation.
var spinnerFrames = []rune("⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏")

// Spinner shows, on a terminal, the MCP servers a command is still waiting for while
// the profile starts (waitReady): every spinnerTick it draws one line per server that has
// been connecting for spinnerDelay or more — "⠹ gh: reconnecting (attempt 2 of 10), 4.2s" —
// in the terminal's live lines, drops the line of a server once it is connected or failed,
// and clears them all when stopped. It reads the status board; it has no state shared with
// its caller but the board and the lines, both safe for concurrent use.
type Spinner struct {
	board *host.StatusBoard
	term  *Lines
	quit  chan struct{}
	done  chan struct{}
}

// StartSpinner starts the spinner of the servers on board, drawn on term.
func StartSpinner(board *host.StatusBoard, term *Lines) *Spinner {
	s := &Spinner{board: board, term: term, quit: make(chan struct{}), done: make(chan struct{})}
	go s.run()
	return s
}

// Stop clears the spinner's lines and returns once it has.
func (s *Spinner) Stop() {
	close(s.quit)
	<-s.done
}

func (s *Spinner) run() {
	defer close(s.done)
	defer s.term.Clear()
	tick := time.NewTicker(spinnerTick)
	defer tick.Stop()
	since := map[*ctx.Scope]time.Time{} // when each client was first seen starting
	for frame := 0; ; frame++ {
		select {
		case <-s.quit:
			return
		case <-tick.C:
		}
		s.term.Draw(spinnerLines(s.board.Statuses(), since, time.Now(), spinnerFrames[frame%len(spinnerFrames)])...)
	}
}

// spinnerLines returns the spinner's lines at now for the clients reporting statuses: one
// per client still connecting (or reconnecting) for spinnerDelay or more since since
// records it first starting. It updates since.
func spinnerLines(statuses []mcpclient.Status, since map[*ctx.Scope]time.Time, now time.Time, frame rune) []string {
	var lines []string
	for _, st := range statuses {
		if st.Phase != mcpclient.PhaseConnecting && st.Phase != mcpclient.PhaseReconnecting {
			continue
		}
		began, seen := since[st.Scope]
		if !seen {
			began = now
			if !st.At.IsZero() && st.At.Before(now) {
				began = st.At // the report's time: the tick came later
			}
			since[st.Scope] = began
		}
		waited := now.Sub(began)
		if waited < spinnerDelay {
			continue
		}
		st.Err, st.StderrTail = "", "" // the phase and attempt; a failure is reported after start-up
		lines = append(lines, fmt.Sprintf("%c %s, %.1fs", frame, host.StatusLine(st), waited.Seconds()))
	}
	return lines
}
