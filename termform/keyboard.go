package termform

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
)

// ErrInterrupted is what a read ends with when Ctrl-C is typed: the question asked is
// cancelled (never a signal to the process while the keyboard is read).
var ErrInterrupted = errInterrupted

// Keyboard is the one reader of a terminal's keys. The chat's prompt, its approval
// questions and servers' forms read through it, one question at a time, and nothing is
// read ahead between questions: what is typed for one question never reaches another (a
// value typed into a form never becomes a chat message). Between questions the terminal
// is in its own mode, so Ctrl-C there is the interrupt signal.
//
// A Keyboard is safe for concurrent use: a question waits for the one on screen to end.
type Keyboard struct {
	t    *tty
	turn chan struct{} // holds a token while a question is asked
	ed   editor        // the prompt's editor (ReadMessage)
}

// NewKeyboard returns the keyboard of the terminal in, or an error wrapping ErrNotTerminal
// when in is not a terminal it can read.
func NewKeyboard(in *os.File) (*Keyboard, error) {
	if in == nil {
		return nil, fmt.Errorf("%w: no input", ErrNotTerminal)
	}
	t, err := openTTY(in)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNotTerminal, err)
	}
	return &Keyboard{t: t, turn: make(chan struct{}, 1)}, nil
}

// take waits for the keyboard (or cx's end) and puts the terminal in the question's
// mode; the returned session reads it, and done gives it back.
func (k *Keyboard) take(cx context.Context, out io.Writer) (s *session, done func(), err error) {
	select {
	case k.turn <- struct{}{}:
	case <-cx.Done():
		return nil, nil, context.Cause(cx)
	}
	restore, err := rawMode(k.t)
	if err != nil {
		<-k.turn
		return nil, nil, err
	}
	read, release, err := k.t.reader(cx)
	if err != nil {
		restore()
		<-k.turn
		return nil, nil, err
	}
	return &session{out: out, read: read}, func() {
		release()
		restore()
		<-k.turn
	}, nil
}

// ReadLine asks one question: it shows prompt on out and reads a line, echoed as typed —
// Enter ends it, Backspace erases, Ctrl-U clears, Ctrl-C ends it with ErrInterrupted (and
// what was typed so far), Ctrl-D on an empty line with io.EOF. When cx ends first, it stops
// reading and returns cx's cause.
func (k *Keyboard) ReadLine(cx context.Context, out io.Writer, prompt string) (string, error) {
	s, done, err := k.take(cx, out)
	if err != nil {
		return "", err
	}
	defer done()
	line, err := s.readLine(prompt, false)
	if cx.Err() != nil {
		return "", context.Cause(cx)
	}
	if errors.Is(err, errHangup) {
		return line, io.EOF
	}
	return line, err
}
