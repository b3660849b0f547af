// Package termform is the terminal's elicitation responder (an elicitation.Responder): a
// server's question shown as a form on the terminal the harness runs in.
//
// A form request prints the server's name and message, then each field with its title,
// description, type, numbered choices with their titles, limits, and its default pre-filled
// (shown as [default]; Enter keeps it). Each answer is read with Field.Parse and asked again,
// with the reason in plain words, until it is valid; secret fields are read without echo. A
// final "Send? [Y/n/cancel]" gives accept, decline or cancel. A URL request shows the page
// and its host, asks whether to open it (Options.Open, $BROWSER), and, once accepted, prints
// "waiting for SERVER to confirm..." and then a line when the server reports the elicitation
// complete (elicitation.CompleteEvent).
//
// The terminal is read key by key while a form is shown (its own mode, restored after):
// Ctrl-C or Ctrl-D is "cancel" for that request and never a signal to the process. One
// request is on screen at a time; others wait for their turn. When a request's context ends
// (answered elsewhere, timed out, withdrawn by the server), the form stops reading at once and
// says so: no read is left pending on the terminal. Server text is printed without control
// characters, so a server cannot redraw the screen.
package termform
