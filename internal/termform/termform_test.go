//go:build linux || darwin || dragonfly || freebsd || netbsd || openbsd

package termform

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
	"go.uber.org/goleak"
	"golang.org/x/sys/unix"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/plugins/elicitation"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// waitTimeout bounds every wait for the terminal: the tests only fail when a form hangs.
const waitTimeout = 10 * time.Second

// screen is the user's side of a pseudo-terminal: what the form drew, and the keyboard.
type screen struct {
	t    *testing.T
	ptmx *os.File
	tty  *os.File

	mu     sync.Mutex
	text   strings.Builder
	mark   int           // where the next expect starts looking
	change chan struct{} // closed (and replaced) when text grows
	done   chan struct{}
}

// newScreen opens a pseudo-terminal; the responder reads and draws on its terminal end.
func newScreen(t *testing.T) *screen {
	t.Helper()
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	s := &screen{t: t, ptmx: ptmx, tty: tty, change: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		buf := make([]byte, 4096)
		for {
			n, err := ptmx.Read(buf)
			if n > 0 {
				s.mu.Lock()
				s.text.Write(buf[:n])
				close(s.change)
				s.change = make(chan struct{})
				s.mu.Unlock()
			}
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		tty.Close()
		ptmx.Close()
		<-s.done
	})
	return s
}

// expect waits until the screen shows want after the previous expectation's match.
func (s *screen) expect(want string) {
	s.t.Helper()
	deadline := time.After(waitTimeout)
	for {
		s.mu.Lock()
		all := s.text.String()
		change := s.change
		s.mu.Unlock()
		if i := strings.Index(all[s.mark:], want); i >= 0 {
			s.mark += i + len(want)
			return
		}
		select {
		case <-change:
		case <-deadline:
			s.t.Fatalf("the screen does not show %q; it shows:\n%s", want, all)
		}
	}
}

// all returns everything drawn so far.
func (s *screen) all() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.text.String()
}

// typeKeys types on the keyboard.
func (s *screen) typeKeys(keys string) {
	s.t.Helper()
	if _, err := s.ptmx.Write([]byte(keys)); err != nil {
		s.t.Fatal(err)
	}
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

	s.expect("demo asks: The demo server would like to know you better.")
	s.expect("Name (required): What to call you\r\n  text, 1 to 40 characters\r\n  [Ada] > ")
	s.typeKeys("\r")
	s.expect("Age (required): In whole years\r\n  a whole number from 1 to 150\r\n  [36] > ")
	s.typeKeys("200\r")
	s.expect("Age: expected a whole number from 1 to 150, got 200")
	s.expect("[36] > ")
	s.typeKeys("4x\x7f2\r") // a typo, erased
	s.expect("Favourite colour\r\n  one of (a number, or the name):\r\n    1. Red (red)\r\n    2. Green (green)\r\n    3. Blue (blue)\r\n  [Green] > ")
	s.typeKeys("3\r")
	s.expect("Subscribe\r\n  yes or no\r\n  [no] > ")
	s.typeKeys("\x1b[A\r") // an arrow key is ignored
	s.expect("API token\r\n  text, hidden as you type\r\n  > ")
	s.typeKeys("hunter2\r")
	s.expect("Send? [Y/n/cancel] ")
	s.typeKeys("\r")

	a := receive(t, ch)
	if a.err != nil || a.res.Action != elicitation.Accept {
		t.Fatalf("answer %+v, %v", a.res, a.err)
	}
	want := map[string]any{"name": "Ada", "age": 42.0, "token": "hunter2", "color": "blue", "subscribe": false}
	for k, v := range want {
		if a.res.Content[k] != v {
			t.Errorf("%s = %#v, want %#v (content %v)", k, a.res.Content[k], v, a.res.Content)
		}
	}
	if len(a.res.Content) != len(want) {
		t.Errorf("content %v, want %v", a.res.Content, want)
	}
	if strings.Contains(s.all(), "hunter2") {
		t.Errorf("the secret was echoed:\n%s", s.all())
	}
	if holds != 0 {
		t.Errorf("%d holds on the terminal's drawing left after the form", holds)
	}
	assertCooked(t, s.tty)
}

// assertCooked checks that the terminal is back in its line mode, with echo and signals.
func assertCooked(t *testing.T, f *os.File) {
	t.Helper()
	tio, err := unix.IoctlGetTermios(int(f.Fd()), ioctlGetTermios)
	if err != nil {
		t.Fatal(err)
	}
	if tio.Lflag&unix.ICANON == 0 || tio.Lflag&unix.ECHO == 0 || tio.Lflag&unix.ISIG == 0 {
		t.Errorf("terminal mode not restored: lflag %#x", tio.Lflag)
	}
}

// TestRequiredWithoutDefault: Enter on a required field without a default asks again; on an
// optional one it leaves the field out.
func TestRequiredWithoutDefault(t *testing.T) {
	s := newScreen(t)
	r := s.responder(Options{})
	ch := ask(t.Context(), r, formRequest(t, `{"type": "object", "required": ["email"], "properties": {
		"email": {"type": "string", "format": "email"}, "note": {"type": "string"}}}`))
	s.expect("email (required)\r\n  an email address\r\n  > ")
	s.typeKeys("\r")
	s.expect("email: an answer is required")
	s.typeKeys("nope\r")
	s.expect("email: expected an email address")
	s.typeKeys("ada@example.com\r\r\r") // typed ahead: the note left out, then Send
	a := receive(t, ch)
	if a.err != nil || a.res.Action != elicitation.Accept || len(a.res.Content) != 1 || a.res.Content["email"] != "ada@example.com" {
		t.Fatalf("answer %+v, %v", a.res, a.err)
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
			ch := ask(t.Context(), r, formRequest(t, `{"type": "object", "properties": {"n": {"type": "integer", "default": 1}}}`))
			s.expect("[1] > ")
			s.typeKeys(tc.keys)
			a := receive(t, ch)
			if a.err != nil || a.res.Action != tc.want || a.res.Content != nil {
				t.Fatalf("answer %+v, %v; want %s", a.res, a.err, tc.want)
			}
			if tc.want == elicitation.Cancel {
				s.expect("cancelled: demo was told you made no choice")
			}
			assertCooked(t, s.tty)
		})
	}
}

// TestClosedElsewhere: when the request's context ends, the form stops reading, says so and
// leaves no read behind: the next form gets the next keys.
func TestClosedElsewhere(t *testing.T) {
	s := newScreen(t)
	r := s.responder(Options{})
	cx, cancel := context.WithCancel(t.Context())
	ch := ask(cx, r, formRequest(t, `{"type": "object", "properties": {"n": {"type": "integer", "default": 1}}}`))
	s.expect("[1] > ")
	cancel()
	a := receive(t, ch)
	if !errors.Is(a.err, context.Canceled) {
		t.Fatalf("answer %+v, %v; want the context's error", a.res, a.err)
	}
	s.expect("demo's question was closed")
	assertCooked(t, s.tty)

	ch = ask(t.Context(), r, formRequest(t, `{"type": "object", "properties": {"n": {"type": "integer", "default": 1}}}`))
	s.expect("[1] > ")
	s.typeKeys("7\r\r")
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
	s.expect("First\r\n")
	ch2 := ask(t.Context(), r, second)
	gone, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := r.Elicit(gone, second); !errors.Is(err, context.Canceled) {
		t.Fatalf("a request whose context ended while waiting: %v", err)
	}
	s.typeKeys("\r\r")
	if a := receive(t, ch1); a.err != nil || a.res.Content["a"] != "x" {
		t.Fatalf("first: %+v, %v", a.res, a.err)
	}
	s.expect("Second\r\n")
	s.typeKeys("z\r\r")
	if a := receive(t, ch2); a.err != nil || a.res.Content["b"] != "z" {
		t.Fatalf("second: %+v, %v", a.res, a.err)
	}
}

// TestURL: the page and its host are shown; yes opens it and waits for the server's
// completion, which is then reported; no declines without opening.
func TestURL(t *testing.T) {
	s := newScreen(t)
	root := ctx.New(ctx.Options{})
	t.Cleanup(func() { root.Scope().Dispose(context.Background()) })
	var opened []string
	r := s.responder(Options{Events: root, Open: func(_ context.Context, u string) error {
		opened = append(opened, u)
		return nil
	}})
	call, end := context.WithCancel(t.Context())
	defer end()
	req := &elicitation.Request{Server: "demo", Mode: elicitation.ModeURL, Message: "Confirm\x1b[2J on the demo page.",
		URL: "https://example.com/confirm?id=demo-1", ID: "demo-1", Call: call}
	ch := ask(t.Context(), r, req)
	s.expect("demo asks you to open a page: Confirm[2J on the demo page.\r\n  https://example.com/confirm?id=demo-1\r\n  (on example.com)\r\n")
	s.expect("Open it in the browser? [Y/n/cancel] ")
	s.typeKeys("\r")
	if a := receive(t, ch); a.err != nil || a.res.Action != elicitation.Accept {
		t.Fatalf("answer %+v, %v", a.res, a.err)
	}
	if len(opened) != 1 || opened[0] != req.URL {
		t.Errorf("opened %v", opened)
	}
	s.expect("waiting for demo to confirm...")
	if err := elicitation.CompleteEvent.Emit(root, elicitation.Completion{Server: "demo", ID: "other"}); err != nil {
		t.Fatal(err)
	}
	if err := elicitation.CompleteEvent.Emit(root, elicitation.Completion{Server: "demo", ID: "demo-1"}); err != nil {
		t.Fatal(err)
	}
	s.expect("demo confirmed: done")
	if strings.Contains(s.all(), "\x1b[2J") {
		t.Error("the server's escape sequence reached the terminal")
	}

	req2 := *req
	req2.ID = "demo-2"
	ch = ask(t.Context(), r, &req2)
	s.expect("Open it in the browser? [Y/n/cancel] ")
	s.typeKeys("n\r")
	if a := receive(t, ch); a.err != nil || a.res.Action != elicitation.Decline || len(opened) != 1 {
		t.Fatalf("answer %+v, %v, opened %v", a.res, a.err, opened)
	}
}

// TestNotTerminal: New refuses a file that is not a terminal.
func TestNotTerminal(t *testing.T) {
	f, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := New(Options{In: f, Out: f}); !errors.Is(err, ErrNotTerminal) {
		t.Fatalf("New(/dev/null) = %v, want ErrNotTerminal", err)
	}
}
