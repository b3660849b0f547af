package termform

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/elicitation"
	"github.com/cordisgo/harness/internal/termsafe"
)

// ErrNotTerminal is returned by New when its input is not a terminal the form can read.
var ErrNotTerminal = errors.New("termform: not a terminal")

// Ends of a form that are the user's choice or the terminal's, not failures.
var (
	errInterrupted = errors.New("interrupted (Ctrl-C)")
	errHangup      = errors.New("the terminal hung up")
)

// maxLine bounds one typed answer, in bytes.
const maxLine = 64 << 10

// urlWait bounds the wait for a URL-mode completion when the request names no call whose
// end would close it.
const urlWait = 10 * time.Minute

// completionGrace is how long a URL-mode completion is still awaited after the call that
// caused it ended: the SDK hands a notification to its handler on a goroutine of its own, so
// a completion the server sent before the call's result may be seen after it.
const completionGrace = 2 * time.Second

// raws holds the restore function of every terminal a form has in its own mode now.
var raws struct {
	sync.Mutex
	restore map[*tty]func()
}

// Restore puts back the mode of every terminal a form is reading now, for a process about to
// exit without its forms' cleanup (os.Exit on a second signal). It is safe to call at any
// time and from any goroutine.
func Restore() {
	raws.Lock()
	defer raws.Unlock()
	for _, restore := range raws.restore {
		restore()
	}
}

// rawMode switches t to the form's mode and records how to restore it (see Restore).
func rawMode(t *tty) (func(), error) {
	restore, err := t.raw()
	if err != nil {
		return nil, err
	}
	raws.Lock()
	if raws.restore == nil {
		raws.restore = map[*tty]func(){}
	}
	raws.restore[t] = restore
	raws.Unlock()
	return func() {
		raws.Lock()
		delete(raws.restore, t)
		raws.Unlock()
		restore()
	}, nil
}

// Options configure a Responder.
type Options struct {
	// In is the terminal the answers are typed on (the process's stdin). It must be a
	// terminal.
	In *os.File
	// Out is where the form is drawn and typing is echoed (the process's stderr, on the same
	// terminal).
	Out io.Writer
	// Open opens a URL in the browser (URL mode); nil offers no browser, the URL is only
	// shown.
	Open func(cx context.Context, url string) error
	// Hold, if set, is called while something is drawn on Out — a form, a line — and
	// returns the function that ends the hold: other drawing on the terminal (a progress
	// bar) pauses in between.
	Hold func() (release func())
	// Events is the context whose tree's elicitation.CompleteEvent the responder listens to
	// for URL-mode completions (the root); nil: completions are not awaited.
	Events *ctx.Context
	// Keyboard is the terminal's one reader, shared with the other questions asked on it
	// (the chat's); nil: the responder reads In through a keyboard of its own.
	Keyboard *Keyboard
}

// Responder is the terminal's elicitation.Responder: it shows one request at a time as a
// form (or a URL to open) on a terminal and reads the answer. It is safe for concurrent
// use: concurrent requests wait for their turn (or for their context's end).
type Responder struct {
	o  Options
	kb *Keyboard

	mu      sync.Mutex
	active  bool     // a request is on screen
	pending []string // lines to print when it is done
}

// New returns a responder reading o.In, or an error wrapping ErrNotTerminal when o.In is not
// a terminal it can read.
func New(o Options) (*Responder, error) {
	if o.Out == nil || o.In == nil && o.Keyboard == nil {
		return nil, fmt.Errorf("%w: no input or output", ErrNotTerminal)
	}
	kb := o.Keyboard
	if kb == nil {
		var err error
		if kb, err = NewKeyboard(o.In); err != nil {
			return nil, err
		}
	}
	return &Responder{o: o, kb: kb}, nil
}

// Supports reports true for forms and URLs.
func (r *Responder) Supports(m elicitation.Mode) bool {
	return m == elicitation.ModeForm || m == elicitation.ModeURL
}

// Elicit shows req and reads the answer. Ctrl-C, or Ctrl-D on an empty answer, is
// "cancel". When cx ends first (the request was answered elsewhere, timed out, or the
// server gave up) it stops reading, says so, and returns cx's cause.
func (r *Responder) Elicit(cx context.Context, req *elicitation.Request) (*elicitation.Response, error) {
	if cx.Err() != nil {
		return nil, context.Cause(cx)
	}
	s, done, err := r.kb.take(cx, r.o.Out)
	if err != nil {
		return nil, err
	}
	defer done()
	r.setActive(true)
	defer r.setActive(false)
	release := r.hold()
	defer release()

	var res *elicitation.Response
	if req.Mode == elicitation.ModeURL {
		res, err = r.url(cx, s, req)
	} else {
		res, err = s.form(req)
	}
	switch {
	case cx.Err() != nil:
		s.printf("\n(%s's question was closed: answered elsewhere, timed out, or withdrawn by the server)\n", clean(req.Server))
		return nil, context.Cause(cx)
	case errors.Is(err, errInterrupted), errors.Is(err, io.EOF), errors.Is(err, errHangup):
		res = &elicitation.Response{Action: elicitation.Cancel}
	case err != nil:
		return nil, err
	}
	switch res.Action {
	case elicitation.Accept:
		if req.Mode == elicitation.ModeForm {
			s.printf("sent to %s\n", clean(req.Server))
		}
	case elicitation.Decline:
		s.printf("declined: %s was told no\n", clean(req.Server))
	case elicitation.Cancel:
		s.printf("cancelled: %s was told you made no choice\n", clean(req.Server))
	}
	return res, nil
}

// hold starts a hold on the terminal's other drawing.
func (r *Responder) hold() func() {
	if r.o.Hold == nil {
		return func() {}
	}
	return r.o.Hold()
}

// setActive marks a request on screen; at its end the lines noted meanwhile are printed.
func (r *Responder) setActive(on bool) {
	r.mu.Lock()
	r.active = on
	lines := r.pending
	r.pending = nil
	r.mu.Unlock()
	for _, l := range lines {
		r.note(l)
	}
}

// note prints one line, after the request on screen if there is one.
func (r *Responder) note(line string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.active {
		r.pending = append(r.pending, line)
		return
	}
	release := r.hold()
	fmt.Fprintln(r.o.Out, line)
	release()
}

// url shows a URL-mode request: the page, and whether to open it.
func (r *Responder) url(cx context.Context, s *session, req *elicitation.Request) (*elicitation.Response, error) {
	server := clean(req.Server)
	s.printf("\n%s asks you to open a page: %s\n", server, indentLines(clean(req.Message)))
	page := clean(req.URL)
	if u, err := url.Parse(req.URL); err == nil && u.Host != "" {
		s.printf("  %s\n  (on %s)\n", page, clean(u.Host))
	} else {
		s.printf("  %s\n", page)
	}
	question := "Open it in the browser? [Y/n/cancel] "
	if r.o.Open == nil {
		question = "Will you open it? [Y/n/cancel] "
	}
	act, err := s.choose(question)
	if err != nil || act != elicitation.Accept {
		return &elicitation.Response{Action: act}, err
	}
	if r.o.Open != nil {
		if err := r.o.Open(cx, req.URL); err != nil {
			s.printf("could not open the browser (%s): open the page yourself\n", strings.ReplaceAll(err.Error(), req.URL, "<the page>"))
		}
	}
	if r.await(req) {
		s.printf("waiting for %s to confirm...\n", server)
	}
	return &elicitation.Response{Action: elicitation.Accept}, nil
}

// await prints a line when the server reports req complete (elicitation.CompleteEvent), and
// stops waiting soon after the call that caused req ends (completionGrace; with no such
// call, after urlWait).
// It reports whether it waits.
func (r *Responder) await(req *elicitation.Request) bool {
	if r.o.Events == nil || req.ID == "" {
		return false
	}
	var (
		mu      sync.Mutex
		over    bool
		dispose ctx.Disposer
		stop    func() bool
	)
	finish := func(line string) {
		mu.Lock()
		if over {
			mu.Unlock()
			return
		}
		over = true
		undo, halt := dispose, stop
		mu.Unlock()
		if line != "" {
			r.note(line)
		}
		if halt != nil {
			halt()
		}
		if undo != nil {
			_ = undo(context.Background())
		}
	}
	d, err := elicitation.CompleteEvent.On(r.o.Events, func(c elicitation.Completion) error {
		if c.ID == req.ID && c.Server == req.Server && (req.Scope == nil || c.Scope == req.Scope) {
			finish(clean(req.Server) + " confirmed: done")
		}
		return nil
	})
	if err != nil {
		return false
	}
	var s func() bool
	if req.Call != nil {
		var grace *time.Timer
		var graceMu sync.Mutex
		after := context.AfterFunc(req.Call, func() {
			graceMu.Lock()
			grace = time.AfterFunc(completionGrace, func() { finish("") })
			graceMu.Unlock()
		})
		s = func() bool {
			after()
			graceMu.Lock()
			defer graceMu.Unlock()
			if grace != nil {
				grace.Stop()
			}
			return true
		}
	} else {
		s = time.AfterFunc(urlWait, func() { finish("") }).Stop
	}
	mu.Lock()
	dispose, stop = d, s
	done := over
	mu.Unlock()
	if done { // finished before the disposers were set
		s()
		_ = d(context.Background())
	}
	return true
}

// session is one request on screen: the terminal's reader and what was typed ahead.
type session struct {
	out  io.Writer
	read func([]byte) (int, error)
	buf  []byte // typed, not yet consumed (a part of scratch)
	esc  int    // escape sequence state: 0 none, 1 after ESC, 2 inside CSI/SS3

	scratch [256]byte
}

func (s *session) printf(format string, args ...any) { fmt.Fprintf(s.out, format, args...) }

// form shows every field of req's form, reads each answer and asks whether to send.
func (s *session) form(req *elicitation.Request) (*elicitation.Response, error) {
	s.printf("\n%s asks: %s\n", clean(req.Server), indentLines(clean(req.Message)))
	fields := req.Form.Fields
	if len(fields) > 0 {
		s.printf("  (Enter keeps the [default]; Ctrl-C cancels)\n")
	}
	content := map[string]any{}
	for i := range fields {
		f := &fields[i]
		s.describe(f)
		for {
			line, err := s.readLine(prompt(f), f.Secret)
			if err != nil {
				return nil, err
			}
			v, err := f.Parse(line)
			if err != nil {
				s.printf("  %s\n", reason(f, err))
				continue
			}
			if v == nil {
				if f.Default != nil {
					v = f.Default
				} else if f.Required {
					s.printf("  %s: an answer is required\n", clean(f.Label()))
					continue
				} else {
					break
				}
			}
			content[f.Name] = v
			break
		}
	}
	if len(fields) > 0 {
		s.printf("\n")
	}
	act, err := s.choose("Send? [Y/n/cancel] ")
	if err != nil || act != elicitation.Accept {
		return &elicitation.Response{Action: act}, err
	}
	return &elicitation.Response{Action: elicitation.Accept, Content: content}, nil
}

// choose asks a yes/no/cancel question; Enter is yes.
func (s *session) choose(question string) (elicitation.Action, error) {
	for {
		line, err := s.readLine(question, false)
		if err != nil {
			return elicitation.Cancel, err
		}
		switch strings.ToLower(strings.TrimSpace(line)) {
		case "", "y", "yes":
			return elicitation.Accept, nil
		case "n", "no":
			return elicitation.Decline, nil
		case "c", "cancel":
			return elicitation.Cancel, nil
		}
		s.printf("  answer y (yes), n (no) or c (cancel)\n")
	}
}

// describe prints a field's title, description, type, choices and limits.
func (s *session) describe(f *elicitation.Field) {
	head := clean(f.Label())
	if f.Required {
		head += " (required)"
	}
	if d := clean(f.Description); d != "" && d != clean(f.Label()) {
		head += ": " + d
	}
	s.printf("\n%s\n", head)
	if what := kindWords(f); what != "" {
		s.printf("  %s\n", what)
	}
	if f.Kind == elicitation.Choice || f.Kind == elicitation.Multi {
		for i, o := range f.Options {
			line := clean(o.Title)
			if !strings.EqualFold(o.Title, o.Value) {
				line += " (" + clean(o.Value) + ")"
			}
			s.printf("    %d. %s\n", i+1, line)
		}
	}
}

// kindWords says what a field takes, with its limits (the elicitation package's words, and
// how to type a choice).
func kindWords(f *elicitation.Field) string {
	switch f.Kind {
	case elicitation.String:
		w := f.Expects()
		if f.Secret {
			w += ", hidden as you type"
		}
		return w
	case elicitation.Choice:
		return "one of (a number, or the name):"
	case elicitation.Multi:
		w := "any of (numbers or names, separated by commas)"
		if l := f.Limits(); l != "" {
			w += ", " + l
		}
		return w + ":"
	}
	return f.Expects()
}

// prompt is "  [default] > " or "  > ".
func prompt(f *elicitation.Field) string {
	if f.Default == nil {
		return "  > "
	}
	return "  [" + defaultText(f) + "] > "
}

// defaultText shows a field's default as the user would type it.
func defaultText(f *elicitation.Field) string {
	if f.Secret {
		return "hidden"
	}
	title := func(v string) string {
		for _, o := range f.Options {
			if o.Value == v {
				return o.Title
			}
		}
		return v
	}
	switch v := f.Default.(type) {
	case bool:
		if v {
			return "yes"
		}
		return "no"
	case float64:
		return num(v)
	case string:
		return clean(title(v))
	case []string:
		ts := make([]string, len(v))
		for i, x := range v {
			ts[i] = clean(title(x))
		}
		return strings.Join(ts, ", ")
	}
	return clean(fmt.Sprint(f.Default))
}

func num(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

// reason words a refused answer with the field's label.
func reason(f *elicitation.Field, err error) string {
	if fe, ok := errors.AsType[*elicitation.FieldError](err); ok {
		return clean(f.Label()) + ": " + fe.Reason
	}
	return err.Error()
}

// readLine prints prompt and reads one line, echoing what is typed unless secret: Enter
// ends it, Backspace erases, Ctrl-U clears, Ctrl-C interrupts, Ctrl-D on an empty line is
// io.EOF; other control keys and escape sequences (arrows) are ignored.
func (s *session) readLine(prompt string, secret bool) (string, error) {
	s.printf("%s", prompt)
	var line []byte
	echo := func(b string) {
		if !secret {
			s.printf("%s", b)
		}
	}
	for {
		if len(s.buf) == 0 {
			n, err := s.read(s.scratch[:])
			if err != nil {
				s.printf("\n")
				return "", err
			}
			s.buf = s.scratch[:n]
		}
		b := s.buf[0]
		s.buf = s.buf[1:]
		switch s.esc {
		case 1:
			s.esc = 0
			if b == '[' || b == 'O' {
				s.esc = 2
			}
			continue
		case 2:
			if b >= 0x40 && b <= 0x7e {
				s.esc = 0
			}
			continue
		}
		switch {
		case b == '\r' || b == '\n':
			s.printf("\n")
			return string(line), nil
		case b == 0x03: // Ctrl-C
			s.printf("^C\n")
			return string(line), errInterrupted
		case b == 0x04: // Ctrl-D
			if len(line) == 0 {
				s.printf("\n")
				return "", io.EOF
			}
		case b == 0x7f || b == 0x08: // Backspace
			if len(line) > 0 {
				_, size := utf8.DecodeLastRune(line)
				line = line[:len(line)-size]
				echo("\b \b")
			}
		case b == 0x15: // Ctrl-U
			echo(strings.Repeat("\b \b", utf8.RuneCount(line)))
			line = line[:0]
		case b == 0x1b:
			s.esc = 1
		case b < 0x20:
		default:
			if len(line) < maxLine {
				line = append(line, b)
				echo(string(b))
			}
		}
	}
}

// clean makes a server's text safe to print on a terminal (internal/termsafe): control
// characters and bidirectional overrides are shown as visible escapes (`\x1b`), tabs
// become spaces; newlines stay.
func clean(s string) string {
	return strings.ReplaceAll(termsafe.String(s), "\t", " ")
}

// indentLines indents the lines after the first of a multi-line message.
func indentLines(s string) string {
	return strings.ReplaceAll(strings.TrimSpace(s), "\n", "\n  ")
}
