//go:build linux || darwin || dragonfly || freebsd || netbsd || openbsd

package termform_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/creack/pty"

	"github.com/cordisgo/harness/elicitation"
	"github.com/cordisgo/harness/termform"
)

// A responder on a terminal (here a pseudo-terminal, whose keyboard the example types on):
// Enter keeps the name's default, 7 answers the number, Enter sends.
func Example() {
	keyboard, terminal, err := pty.Open()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer func() { _ = keyboard.Close() }()
	defer func() { _ = terminal.Close() }()
	go func() { _, _ = io.Copy(io.Discard, keyboard) }() // the screen, unread
	if _, err := keyboard.Write([]byte("\r7\r\r")); err != nil {
		fmt.Println(err)
		return
	}

	r, err := termform.New(termform.Options{In: terminal, Out: terminal})
	if err != nil {
		fmt.Println(err)
		return
	}
	form, _ := elicitation.ParseForm(json.RawMessage(`{"type": "object", "required": ["name"], "properties": {
		"name": {"type": "string", "default": "Ada"}, "n": {"type": "integer", "minimum": 1}}}`))
	res, err := r.Elicit(context.Background(), &elicitation.Request{Server: "demo", Mode: elicitation.ModeForm, Message: "Who?", Form: form})
	fmt.Println(res.Action, res.Content["name"], res.Content["n"], err)
	// Output:
	// accept Ada 7 <nil>
}
