package host

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/internal/termsafe"
	"github.com/cordisgo/harness/internal/words"
	"github.com/cordisgo/harness/plugins/mcpclient"
	"github.com/cordisgo/harness/plugins/mcpmanager"
)

// StatusBoard follows every MCP client in a tree (mcpclient.StatusEvent): it keeps the last
// report of each, by client scope, and hands each report to the function it was made with,
// if any (a live display). It is safe for concurrent use; Report never blocks on anything
// but that function, which must be quick (one line to stderr or a logger).
type StatusBoard struct {
	mu    sync.Mutex
	last  map[*ctx.Scope]mcpclient.Status
	order []*ctx.Scope
	live  func(mcpclient.Status)
	next  chan struct{} // closed (and replaced) by the next report
}

// NewStatusBoard returns an empty board that hands every report to live (nil: none).
func NewStatusBoard(live func(mcpclient.Status)) *StatusBoard { return &StatusBoard{live: live} }

// Report records st; it is the board's mcpclient.StatusEvent listener.
func (b *StatusBoard) Report(st mcpclient.Status) error {
	st.Tools = slices.Clone(st.Tools)
	b.mu.Lock()
	if b.last == nil {
		b.last = map[*ctx.Scope]mcpclient.Status{}
	}
	if _, seen := b.last[st.Scope]; !seen {
		b.order = append(b.order, st.Scope)
	}
	b.last[st.Scope] = st
	if b.next != nil {
		close(b.next)
		b.next = nil
	}
	live := b.live
	b.mu.Unlock()
	if live != nil {
		live(st)
	}
	return nil
}

// changed returns a channel closed at the next report.
func (b *StatusBoard) changed() <-chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.next == nil {
		b.next = make(chan struct{})
	}
	return b.next
}

// Watch returns the last report of every client (as Statuses) and a channel closed at the
// next report.
func (b *StatusBoard) Watch() ([]mcpclient.Status, <-chan struct{}) {
	ch := b.changed()
	return b.Statuses(), ch
}

// await follows the reports of the client of scope until it is connected or failed, or
// cx ends (then the error is a *RestartTimeoutError; timeout is what it reports), calling
// progress with each report that reads differently from the one before.
func (b *StatusBoard) await(cx context.Context, scope *ctx.Scope, timeout time.Duration, progress func(mcpmanager.View)) (mcpmanager.View, error) {
	shown := ""
	for {
		next := b.changed()
		b.mu.Lock()
		st, ok := b.last[scope]
		b.mu.Unlock()
		v := ClientView(st)
		if ok {
			if line := StatusLine(st); line != shown {
				shown = line
				progress(v)
			}
			if st.Phase == mcpclient.PhaseConnected || st.Phase == mcpclient.PhaseFailed || st.Phase == mcpclient.PhaseNeedsAuth || NotStarted(st.Phase) {
				return v, nil
			}
		}
		select {
		case <-next:
		case <-cx.Done():
			return v, &RestartTimeoutError{Name: st.Server, Timeout: timeout, Last: v}
		}
	}
}

// Statuses returns the last report of every client, in the order they first reported,
// leaving out disposed clients.
func (b *StatusBoard) Statuses() []mcpclient.Status {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]mcpclient.Status, 0, len(b.order))
	for _, s := range b.order {
		if st := b.last[s]; st.Phase != mcpclient.PhaseDisposed {
			out = append(out, st)
		}
	}
	return out
}

// NotReady returns the reports of the clients that are not connected (a lazy server that
// has not started is ready: its first call starts it).
func (b *StatusBoard) NotReady() []mcpclient.Status {
	var out []mcpclient.Status
	for _, st := range b.Statuses() {
		if st.Phase != mcpclient.PhaseConnected && !NotStarted(st.Phase) {
			out = append(out, st)
		}
	}
	return out
}

// Managed reports whether the client reporting st was mounted by the MCP server manager
// (whose views, richer than a client's report, describe it).
func Managed(st mcpclient.Status) bool {
	if st.Scope == nil {
		return false
	}
	p := st.Scope.Parent()
	return p != nil && p.Def() == ctx.PluginDef(mcpmanager.Plugin)
}

// NotStarted reports whether p is a lazy server's state while no process runs (not
// started yet, or stopped when idle): ready, since its first call starts it.
func NotStarted(p mcpclient.Phase) bool {
	return p == mcpclient.PhaseLazy || p == mcpclient.PhaseIdle
}

// StatusLine renders a report for people, one line, with the server's own text (its error,
// the end of its stderr) made safe for a terminal:
//
//	demo: connected (8 tools)
//	gh: reconnecting (attempt 2 of 10): connect: exec: "gh-mcp": executable file not found in $PATH
func StatusLine(st mcpclient.Status) string {
	var b strings.Builder
	b.WriteString(st.Server)
	b.WriteString(": ")
	b.WriteString(string(st.Phase))
	switch st.Phase {
	case mcpclient.PhaseConnected:
		fmt.Fprintf(&b, " (%d tool%s)", len(st.Tools), words.Plural(len(st.Tools)))
	case mcpclient.PhaseLazy, mcpclient.PhaseIdle:
		fmt.Fprintf(&b, " (%d tool%s, starts at the first call)", len(st.Tools), words.Plural(len(st.Tools)))
	case mcpclient.PhaseReconnecting, mcpclient.PhaseConnecting:
		if st.Attempt > 0 && st.MaxAttempts > 0 {
			fmt.Fprintf(&b, " (attempt %d of %d)", st.Attempt, st.MaxAttempts)
		} else if st.Attempt > 1 {
			fmt.Fprintf(&b, " (attempt %d)", st.Attempt)
		}
	}
	if st.Err != "" {
		b.WriteString(": ")
		// The client words its errors for logs, naming the server first.
		b.WriteString(JoinLines(strings.TrimPrefix(st.Err, fmt.Sprintf("mcp server %q: ", st.Server))))
	}
	// The end of the server's stderr explains a failure; without one (a clean stop, a
	// connection) it is only the server's banner, not an error.
	if tail := LastLine(st.StderrTail); tail != "" && st.Err != "" && st.Phase != mcpclient.PhaseConnected && !strings.Contains(st.Err, tail) {
		b.WriteString(" (stderr: ")
		b.WriteString(tail)
		b.WriteString(")")
	}
	if st.CleanupIncomplete {
		b.WriteString(" [process cleanup incomplete]")
	}
	return termsafe.Line(b.String()) // the server's error and stderr: shown safe
}

// JoinLines joins the lines of s with "; ".
func JoinLines(s string) string {
	fields := strings.FieldsFunc(strings.TrimSpace(s), func(r rune) bool { return r == '\n' || r == '\r' })
	return strings.Join(fields, "; ")
}

// LastLine returns the last non-blank line of s (the end of a server's stderr), cut to 200 runes (the last one "…" when
// cut).
func LastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return words.Clip(strings.TrimSpace(lines[len(lines)-1]), 200)
}

// ViewStatus turns a manager's status change into the client status it reads as (for
// StatusLine): a stopped, disabled or removed server without its last error, which is not
// news.
func ViewStatus(ch mcpmanager.StatusChange) mcpclient.Status {
	v := ch.Status
	phase := mcpclient.Phase(v.Status)
	if ch.Removed {
		phase = "removed"
	}
	switch {
	case ch.Removed, v.Status == mcpmanager.StateStopping, v.Status == mcpmanager.StateDisabled:
		// Stopping is what was asked: the last error (shown when it happened) is not news.
		v.Error, v.StderrTail, v.Attempt, v.MaxAttempts = "", "", 0, 0
	}
	return mcpclient.Status{
		Server:            ch.Name,
		Phase:             phase,
		Attempt:           v.Attempt,
		MaxAttempts:       v.MaxAttempts,
		Err:               v.Error,
		StderrTail:        v.StderrTail,
		Tools:             v.Tools,
		CleanupIncomplete: v.Status == mcpmanager.StateCleanupIncomplete,
	}
}

// SourceProfile is the Source of the views and probe results of the profile's own client
// rows (the manager's are settings or registered).
const SourceProfile mcpmanager.Source = "profile"

// ClientView is the view of a profile's own client (one the manager did not mount) from
// its last report: the fields of a manager's view that a report has, so that both read
// alike. Its configuration is redacted.
func ClientView(st mcpclient.Status) mcpmanager.View {
	v := mcpmanager.View{
		Name: st.Server, Source: SourceProfile, Enabled: true, Transport: st.Transport,
		Status: mcpmanager.State(st.Phase), Error: st.Err, Attempt: st.Attempt, MaxAttempts: st.MaxAttempts,
		ProtocolVersion: st.ProtocolVersion, Tools: st.Tools, InstructionBytes: st.InstructionBytes, StderrTail: st.StderrTail,
	}
	if st.ServerName != "" {
		v.ServerInfo = &mcpmanager.ServerInfo{Name: st.ServerName, Version: st.ServerVersion, Description: st.ServerDescription}
	}
	if st.Scope != nil {
		if cfg, ok := mcpclient.Plugin.Config(st.Scope); ok {
			if v.Transport == "" {
				v.Transport = cfg.Transport
			}
			v.Config = cfg.Redacted()
		}
	}
	if v.Tools == nil {
		v.Tools = []string{}
	}
	return v
}

// FollowManager calls fn with the status of every server of h's MCP server manager (its
// views as [ViewStatus] reads them): the list first, then every change, a change whose
// line ([StatusLine]) repeats the server's last one left out (the manager's events may
// repeat the list). A profile without a manager calls nothing. fn may be called from the
// manager's goroutines; it must be safe for concurrent use.
func FollowManager(h *Host, fn func(mcpclient.Status)) error {
	m, ok := mcpmanager.Key.Get(h.Root())
	if !ok {
		return nil
	}
	var mu sync.Mutex
	shown := map[string]string{} // last line per server
	live := func(st mcpclient.Status) {
		line := StatusLine(st)
		mu.Lock()
		repeat := shown[st.Server] == line
		shown[st.Server] = line
		mu.Unlock()
		if !repeat {
			fn(st)
		}
	}
	if _, err := mcpmanager.StatusEvent.On(h.Root(), func(ch mcpmanager.StatusChange) error {
		live(ViewStatus(ch))
		return nil
	}); err != nil {
		return err
	}
	for _, v := range m.List() {
		live(ViewStatus(mcpmanager.StatusChange{Name: v.Name, Status: v, Removed: v.Removed}))
	}
	return nil
}
