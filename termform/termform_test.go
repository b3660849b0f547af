//go:build linux || darwin || dragonfly || freebsd || netbsd || openbsd

package termform

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/elicitation"
	"github.com/cordisgo/harness/internal/ptytest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// waitTimeout bounds the waits for an answer: the tests only fail when a form hangs.
const waitTimeout = ptytest.WaitTimeout

// screen is a pseudo-terminal that a responder of the test's process reads and draws on.
type screen struct {
	*ptytest.Screen
	t   *testing.T
	tty *os.File
}

// assertCooked fails the test unless the terminal is back in its line mode.
func (s *screen) assertCooked() {
	s.t.Helper()
	if !s.Cooked() {
		s.t.Error("the terminal's mode was not restored")
	}
}

func newScreen(t *testing.T) *screen {
	s := ptytest.Open(t)
	return &screen{Screen: s, t: t, tty: s.TTY}
}

// responder returns a responder on the screen's terminal.
func (s *screen) responder(o Options) *Responder {
	s.t.Helper()
	o.In, o.Out = s.tty, s.tty
	r, err := New(o)
	if err != nil {
		s.t.Fatal(err)
	}
	return r
}

type answer struct {
	res *elicitation.Response
	err error
}

// ask runs Elicit in the background.
func ask(cx context.Context, r *Responder, req *elicitation.Request) <-chan answer {
	ch := make(chan answer, 1)
	go func() {
		res, err := r.Elicit(cx, req)
		ch <- answer{res, err}
	}()
	return ch
}

// askNumber puts a form of one integer, n (default 1), to r in the background and waits
// for its prompt.
func (s *screen) askNumber(cx context.Context, r *Responder) <-chan answer {
	s.t.Helper()
	ch := ask(cx, r, formRequest(s.t, `{"type": "object", "properties": {"n": {"type": "integer", "default": 1}}}`))
	s.Expect("[1] > ")
	return ch
}

func receive(t *testing.T, ch <-chan answer) answer {
	t.Helper()
	select {
	case a := <-ch:
		return a
	case <-time.After(waitTimeout):
		t.Fatal("no answer from the form")
		panic("unreachable")
	}
}

// accepted receives the form's answer and fails the test unless the person accepted it.
func accepted(t *testing.T, ch <-chan answer) *elicitation.Response {
	t.Helper()
	a := receive(t, ch)
	if a.err != nil || a.res.Action != elicitation.Accept {
		t.Fatalf("answer %+v, %v", a.res, a.err)
	}
	return a.res
}

// demoSchema is the demo server's ask form.
const demoSchema = `{"type": "object", "required": ["name", "age"], "properties": {
	"name": {"type": "string", "title": "Name", "description": "What to call you", "minLength": 1, "maxLength": 40, "default": "Ada"},
	"age": {"type": "integer", "title": "Age", "description": "In whole years", "minimum": 1, "maximum": 150, "default": 36},
	"color": {"type": "string", "title": "Favourite colour", "default": "green",
		"oneOf": [{"const": "red", "title": "Red"}, {"const": "green", "title": "Green"}, {"const": "blue", "title": "Blue"}]},
	"subscribe": {"type": "boolean", "title": "Subscribe", "default": false},
	"token": {"type": "string", "title": "API token", "writeOnly": true}}}`

func formRequest(t *testing.T, schema string) *elicitation.Request {
	t.Helper()
	f, err := elicitation.ParseForm(json.RawMessage(schema))
	if err != nil {
		t.Fatal(err)
	}
	return &elicitation.Request{Server: "demo", Mode: elicitation.ModeForm, Message: "The demo server would like to know you better.", Form: f}
}

// TestForm: every field shown with its title, description, type, choices, limits and
// default; Enter keeps a default; an invalid value is refused in plain words and asked
// again; the secret is not echoed; the answer is what was typed.
func TestForm(t *testing.T) {
	s := newScreen(t)
	holds := 0
	r := s.responder(Options{Hold: func() func() { holds++; return func() { holds-- } }})
	ch := ask(t.Context(), r, formRequest(t, demoSchema))

	s.Expect("demo asks: The demo server would like to know you better.")
	s.Expect("Name (required): What to call you\r\n  text, 1 to 40 characters\r\n  [Ada] > ")
	s.Type("\r")
	s.Expect("Age (required): In whole years\r\n  a whole number from 1 to 150\r\n  [36] > ")
	s.Type("200\r")
	s.Expect("Age: expected a whole number from 1 to 150, got 200")
	s.Expect("[36] > ")
	s.Type("4x\x7f2\r") // a typo, erased
	s.Expect("Favourite colour\r\n  one of (a number, or the name):\r\n    1. Red\r\n    2. Green\r\n    3. Blue\r\n  [Green] > ")
	s.Type("3\r")
	s.Expect("Subscribe\r\n  yes or no\r\n  [no] > ")
	s.Type("\x1b[A\r") // an arrow key is ignored
	s.Expect("API token\r\n  text, hidden as you type\r\n  > ")
	s.Type("hunter2\r")
	s.Expect("Send? [Y/n/cancel] ")
	s.Type("\r")

	res := accepted(t, ch)
	want := map[string]any{"name": "Ada", "age": 42.0, "token": "hunter2", "color": "blue", "subscribe": false}
	for k, v := range want {
		if res.Content[k] != v {
			t.Errorf("%s = %#v, want %#v (content %v)", k, res.Content[k], v, res.Content)
		}
	}
	if len(res.Content) != len(want) {
		t.Errorf("content %v, want %v", res.Content, want)
	}
	if strings.Contains(s.All(), "hunter2") {
		t.Errorf("the secret was echoed:\n%s", s.All())
	}
	if holds != 0 {
		t.Errorf("%d holds on the terminal's drawing left after the form", holds)
	}
	s.assertCooked()
}

// TestRequiredWithoutDefault: Enter on a required field without a default asks again; on an
// optional one it leaves the field out.
func TestRequiredWithoutDefault(t *testing.T) {
	s := newScreen(t)
	r := s.responder(Options{})
	ch := ask(t.Context(), r, formRequest(t, `{"type": "object", "required": ["email"], "properties": {
		"email": {"type": "string", "format": "email"}, "note": {"type": "string"}}}`))
	s.Expect("email (required)\r\n  an email address\r\n  > ")
	s.Type("\r")
	s.Expect("email: an answer is required")
	s.Type("nope\r")
	s.Expect("email: expected an email address")
	s.Type("ada@example.com\r\r\r") // typed ahead: the note left out, then Send
	if res := accepted(t, ch); len(res.Content) != 1 || res.Content["email"] != "ada@example.com" {
		t.Fatalf("answer %+v", res)
	}
}

// TestChoices: several choices by title or number, a legacy titled enum, a number's default.
func TestChoices(t *testing.T) {
	s := newScreen(t)
	r := s.responder(Options{})
	ch := ask(t.Context(), r, formRequest(t, `{"type": "object", "properties": {
		"fish": {"type": "array", "title": "Fish", "minItems": 1, "maxItems": 2, "default": ["fish-1"],
			"items": {"anyOf": [{"const": "fish-1", "title": "Tuna"}, {"const": "fish-2", "title": "Salmon"}, {"const": "fish-3", "title": "Trout"}]}},
		"pet": {"type": "string", "enum": ["pet-1", "pet-2"], "enumNames": ["Cats", "Dogs"]},
		"x": {"type": "number", "maximum": 1000, "default": 3.14}}}`))
	s.Expect("Fish\r\n  any of (numbers or names, separated by commas), 1 to 2 choices:\r\n    1. Tuna (fish-1)\r\n    2. Salmon (fish-2)\r\n    3. Trout (fish-3)\r\n  [Tuna] > ")
	s.Type("tuna, 2, 3\r")
	s.Expect("Fish: expected at most 2 choices, got 3")
	s.Type("tuna, 3\r")
	s.Expect("pet\r\n  one of (a number, or the name):\r\n    1. Cats (pet-1)\r\n    2. Dogs (pet-2)\r\n  > ")
	s.Type("dogs\r")
	s.Expect("x\r\n  a number of at most 1000\r\n  [3.14] > ")
	s.Type("\r\r")
	res := accepted(t, ch)
	if got := fmt.Sprintf("%v %v %v", res.Content["fish"], res.Content["pet"], res.Content["x"]); got != "[fish-1 fish-3] pet-2 3.14" {
		t.Errorf("content %v", res.Content)
	}
}

// TestDeclineAndCancel: "n" declines, "cancel" and Ctrl-C and Ctrl-D cancel; Ctrl-C is
// read, not a signal.
func TestDeclineAndCancel(t *testing.T) {
	for _, tc := range []struct {
		name, keys string
		want       elicitation.Action
	}{
		{"decline", "\rn\r", elicitation.Decline},
		{"cancel word", "\rcancel\r", elicitation.Cancel},
		{"what", "\rwhat\rno\r", elicitation.Decline},
		{"ctrl-c", "\x03", elicitation.Cancel},
		{"ctrl-d", "\x04", elicitation.Cancel},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newScreen(t)
			r := s.responder(Options{})
			ch := s.askNumber(t.Context(), r)
			s.Type(tc.keys)
			a := receive(t, ch)
			if a.err != nil || a.res.Action != tc.want || a.res.Content != nil {
				t.Fatalf("answer %+v, %v; want %s", a.res, a.err, tc.want)
			}
			if tc.want == elicitation.Cancel {
				s.Expect("cancelled: demo was told you made no choice")
			}
			s.assertCooked()
		})
	}
}

// TestClosedElsewhere: when the request's context ends, the form stops reading, says so and
// leaves no read behind: the next form gets the next keys.
func TestClosedElsewhere(t *testing.T) {
	s := newScreen(t)
	r := s.responder(Options{})
	cx, cancel := context.WithCancel(t.Context())
	ch := s.askNumber(cx, r)
	cancel()
	a := receive(t, ch)
	if !errors.Is(a.err, context.Canceled) {
		t.Fatalf("answer %+v, %v; want the context's error", a.res, a.err)
	}
	s.Expect("demo's question was closed")
	s.assertCooked()

	ch = s.askNumber(t.Context(), r)
	s.Type("7\r\r")
	if a := receive(t, ch); a.err != nil || a.res.Content["n"] != 7.0 {
		t.Fatalf("second form: %+v, %v", a.res, a.err)
	}
}

// TestOneAtATime: a second request waits until the first is answered; one whose context ends
// while it waits returns without showing anything.
func TestOneAtATime(t *testing.T) {
	s := newScreen(t)
	r := s.responder(Options{})
	first := formRequest(t, `{"type": "object", "properties": {"a": {"type": "string", "title": "First", "default": "x"}}}`)
	second := formRequest(t, `{"type": "object", "properties": {"b": {"type": "string", "title": "Second", "default": "y"}}}`)
	ch1 := ask(t.Context(), r, first)
	s.Expect("First\r\n")
	ch2 := ask(t.Context(), r, second)
	gonecx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := r.Elicit(gonecx, second); !errors.Is(err, context.Canceled) {
		t.Fatalf("a request whose context ended while waiting: %v", err)
	}
	s.Type("\r\r")
	if a := receive(t, ch1); a.err != nil || a.res.Content["a"] != "x" {
		t.Fatalf("first: %+v, %v", a.res, a.err)
	}
	s.Expect("Second\r\n")
	s.Type("z\r\r")
	if a := receive(t, ch2); a.err != nil || a.res.Content["b"] != "z" {
		t.Fatalf("second: %+v, %v", a.res, a.err)
	}
}

// TestURL: the page and its host are shown; yes opens it and waits for the server's
// completion, which is then reported; no declines without opening.
func TestURL(t *testing.T) {
	s := newScreen(t)
	root := ctx.New(ctx.Options{})
	t.Cleanup(func() { _ = root.Scope().Dispose(context.Background()) })
	var opened []string
	r := s.responder(Options{Events: root, Open: func(_ context.Context, u string) error {
		opened = append(opened, u)
		return nil
	}})
	callcx, end := context.WithCancel(t.Context())
	defer end()
	req := &elicitation.Request{Server: "demo", Mode: elicitation.ModeURL, Message: "Confirm\x1b[2J on the demo page.",
		URL: "https://example.com/confirm?id=demo-1", ID: "demo-1", Call: callcx}
	ch := ask(t.Context(), r, req)
	s.Expect("demo asks you to open a page: Confirm\\x1b[2J on the demo page.\r\n  https://example.com/confirm?id=demo-1\r\n  (on example.com)\r\n")
	s.Expect("Open it in the browser? [Y/n/cancel] ")
	s.Type("\r")
	accepted(t, ch)
	if len(opened) != 1 || opened[0] != req.URL {
		t.Errorf("opened %v", opened)
	}
	s.Expect("waiting for demo to confirm...")
	if err := elicitation.CompleteEvent.Emit(root, elicitation.Completion{Server: "demo", ID: "other"}); err != nil {
		t.Fatal(err)
	}
	if err := elicitation.CompleteEvent.Emit(root, elicitation.Completion{Server: "demo", ID: "demo-1"}); err != nil {
		t.Fatal(err)
	}
	s.Expect("demo confirmed: done")
	if strings.Contains(s.All(), "\x1b[2J") {
		t.Error("the server's escape sequence reached the terminal")
	}

	req2 := *req
	req2.ID = "demo-2"
	ch = ask(t.Context(), r, &req2)
	s.Expect("Open it in the browser? [Y/n/cancel] ")
	s.Type("n\r")
	if a := receive(t, ch); a.err != nil || a.res.Action != elicitation.Decline || len(opened) != 1 {
		t.Fatalf("answer %+v, %v, opened %v", a.res, a.err, opened)
	}
}

// TestRestore: Restore puts the mode of a terminal back while its form is shown (for a
// process about to exit at once); the form's own restore at its end is then harmless.
func TestRestore(t *testing.T) {
	s := newScreen(t)
	r := s.responder(Options{})
	cx, cancel := context.WithCancel(t.Context())
	ch := s.askNumber(cx, r)
	if s.Cooked() {
		t.Fatal("the terminal is in its line mode while the form reads it")
	}
	Restore()
	s.assertCooked()
	cancel()
	if a := receive(t, ch); !errors.Is(a.err, context.Canceled) {
		t.Fatalf("answer %+v, %v", a.res, a.err)
	}
	s.assertCooked()
	Restore() // no form: nothing to do
}

// TestNotTerminal: New refuses a file that is not a terminal.
func TestNotTerminal(t *testing.T) {
	f, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	if _, err := New(Options{In: f, Out: f}); !errors.Is(err, ErrNotTerminal) {
		t.Fatalf("New(/dev/null) = %v, want ErrNotTerminal", err)
	}
}
