package termform

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"sync"

	"golang.org/x/term"
)

// The keys of the prompt editor beyond golang.org/x/term's: Alt-Enter (ESC CR, which the
// terminal's input mode reads as ESC LF) starts a new line of the same message.
var altEnter = [][]byte{[]byte("\x1b\r"), []byte("\x1b\n")}

// editor is the prompt's line editor: golang.org/x/term's Terminal (editing keys, history,
// bracketed paste) reading the keyboard through a question's session. It lives as long as
// the keyboard, so the history does too.
type editor struct {
	mu sync.Mutex
	t  *term.Terminal
	rw *editorIO
}

// editorIO is what the Terminal reads and writes: the current question's keys, looked at
// first (Ctrl-C, Alt-Enter), and the output.
type editorIO struct {
	read        func([]byte) (int, error)
	out         io.Writer
	interrupted bool // Ctrl-C was typed
	typed       bool // a key other than Ctrl-C was typed on this line
	newline     bool // Alt-Enter was typed
}

func (e *editorIO) Read(p []byte) (int, error) {
	n, err := e.read(p)
	if n > 0 {
		i := bytes.IndexByte(p[:n], 0x03)
		if i >= 0 {
			e.interrupted = true
		} else {
			i = n
		}
		e.typed = e.typed || i > 0
		for _, seq := range altEnter {
			if i := bytes.Index(p[:n], seq); i >= 0 {
				e.newline = true
				copy(p[i:], p[i+1:n]) // ESC CR is CR, which ends the line
				n--
			}
		}
	}
	return n, err
}

func (e *editorIO) Write(p []byte) (int, error) { return e.out.Write(p) }

// ReadMessage asks for a message at the prompt: a line edited with golang.org/x/term's
// editor (arrows, Home/End, Ctrl-A/E/K/U/W, history with Up/Down), more lines with
// Alt-Enter (each shown after "… "), and a paste kept whole — bracketed paste: the lines of
// a paste, and what is typed after it until Enter, are one message. Ctrl-C drops what was
// typed and asks again; on an empty prompt it ends the question with ErrInterrupted. Ctrl-D
// on an empty line is io.EOF. When cx ends first, it stops reading and returns cx's cause.
func (k *Keyboard) ReadMessage(cx context.Context, out io.Writer, prompt string) (string, error) {
	s, done, err := k.take(cx, out)
	if err != nil {
		return "", err
	}
	defer done()
	k.ed.mu.Lock()
	defer k.ed.mu.Unlock()
	if k.ed.t == nil {
		k.ed.rw = &editorIO{}
		k.ed.t = term.NewTerminal(k.ed.rw, prompt)
	}
	rw, t := k.ed.rw, k.ed.t
	*rw = editorIO{read: s.read, out: out}
	if w, h, err := term.GetSize(k.t.fd); err == nil {
		_ = t.SetSize(w, h)
	}
	t.SetBracketedPasteMode(true)
	defer t.SetBracketedPasteMode(false)
	t.SetPrompt(prompt)
	var lines []string
	for {
		rw.typed, rw.interrupted = false, false
		line, err := t.ReadLine()
		switch {
		case cx.Err() != nil:
			return "", context.Cause(cx)
		case errors.Is(err, term.ErrPasteIndicator): // a pasted line: the message goes on
			lines = append(lines, line)
			t.SetPrompt("")
			continue
		case rw.interrupted && (rw.typed || len(lines) > 0):
			_, _ = io.WriteString(out, "^C\r\n") // what was typed is dropped: ask again
			lines = nil
			t.SetPrompt(prompt)
			continue
		case rw.interrupted:
			_, _ = io.WriteString(out, "^C\r\n")
			return "", ErrInterrupted
		case errors.Is(err, errHangup), errors.Is(err, io.EOF) && len(lines) > 0:
			return strings.Join(append(lines, line), "\n"), io.EOF
		case err != nil:
			return "", err
		}
		lines = append(lines, line)
		if rw.newline {
			rw.newline = false
			t.SetPrompt("… ")
			continue
		}
		return strings.Join(lines, "\n"), nil
	}
}
