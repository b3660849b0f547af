package app

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/internal/termsafe"
	"github.com/cordisgo/harness/plugins/mcpclient"
	"github.com/cordisgo/harness/plugins/mcpmanager"
	"github.com/cordisgo/harness/profiles"
)

// statusBoard follows every MCP client in the tree (mcpclient.StatusEvent):
// it keeps the last report of each, by client scope, and hands each report
// to live, if set (the run command's live display). It is safe for
// concurrent use; report never blocks on anything but live, which must be
// quick (one line to stderr or the logger).
type statusBoard struct {
	mu    sync.Mutex
	last  map[*ctx.Scope]mcpclient.Status
	order []*ctx.Scope
	live  func(mcpclient.Status)
	next  chan struct{} // closed (and replaced) by the next report
}

// report records st; it is the board's mcpclient.StatusEvent listener.
func (b *statusBoard) report(st mcpclient.Status) error {
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

// await follows the reports of the client of scope until it is connected or failed, or
// cx ends (then the error is a *restartTimeoutError; timeout is what it reports), calling
// progress with each report that reads differently from the one before.
func (b *statusBoard) await(cx context.Context, scope *ctx.Scope, timeout time.Duration, progress func(mcpmanager.View)) (mcpmanager.View, error) {
	shown := ""
	for {
		b.mu.Lock()
		st, ok := b.last[scope]
		if b.next == nil {
			b.next = make(chan struct{})
		}
		next := b.next
		b.mu.Unlock()
		v := clientView(st)
		if ok {
			if line := statusLine(st); line != shown {
				shown = line
				progress(v)
			}
			if st.Phase == mcpclient.PhaseConnected || st.Phase == mcpclient.PhaseFailed || st.Phase == mcpclient.PhaseNeedsAuth || notStarted(st.Phase) {
				return v, nil
			}
		}
		select {
		case <-next:
		case <-cx.Done():
			return v, &restartTimeoutError{name: st.Server, timeout: timeout, last: v}
		}
	}
}

// managerUse is the catalog name of the MCP server manager plugin.
const managerUse = "mcpmanager"

// managed reports whether the client reporting st was mounted by the MCP server manager
// (whose views, richer than a client's report, describe it).
func managed(st mcpclient.Status) bool {
	if st.Scope == nil {
		return false
	}
	p := st.Scope.Parent()
	return p != nil && p.Def() == ctx.PluginDef(mcpmanager.Plugin)
}

// statuses returns the last report of every client, in the order they
// first reported, leaving out disposed clients.
func (b *statusBoard) statuses() []mcpclient.Status {
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

// notReady returns the reports of the clients that are not connected.
func (b *statusBoard) notReady() []mcpclient.Status {
	var out []mcpclient.Status
	for _, st := range b.statuses() {
		if st.Phase != mcpclient.PhaseConnected && !notStarted(st.Phase) {
			out = append(out, st)
		}
	}
	return out
}

// statusLine renders a report for people, one line:
//
//	demo: connected (8 tools)
//	gh: reconnecting (attempt 2 of 10): connect: exec: "gh-mcp": executable file not found in $PATH
func statusLine(st mcpclient.Status) string {
	var b strings.Builder
	b.WriteString(st.Server)
	b.WriteString(": ")
	b.WriteString(string(st.Phase))
	switch st.Phase {
	case mcpclient.PhaseConnected:
		fmt.Fprintf(&b, " (%d tool%s)", len(st.Tools), plural(len(st.Tools)))
	case mcpclient.PhaseLazy, mcpclient.PhaseIdle:
		fmt.Fprintf(&b, " (%d tool%s, starts at the first call)", len(st.Tools), plural(len(st.Tools)))
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
		b.WriteString(joinLines(strings.TrimPrefix(st.Err, fmt.Sprintf("mcp server %q: ", st.Server))))
	}
	// The end of the server's stderr explains a failure; without one (a clean stop, a
	// connection) it is only the server's banner, not an error.
	if tail := lastLine(st.StderrTail); tail != "" && st.Err != "" && st.Phase != mcpclient.PhaseConnected && !strings.Contains(st.Err, tail) {
		b.WriteString(" (stderr: ")
		b.WriteString(tail)
		b.WriteString(")")
	}
	if st.CleanupIncomplete {
		b.WriteString(" [process cleanup incomplete]")
	}
	return termsafe.Line(b.String()) // the server's error and stderr: shown safe
}

// joinLines joins the lines of s with "; ".
func joinLines(s string) string {
	fields := strings.FieldsFunc(strings.TrimSpace(s), func(r rune) bool { return r == '\n' || r == '\r' })
	return strings.Join(fields, "; ")
}

// lastLine returns the last non-blank line of s, cut to 200 runes.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return summary(lines[len(lines)-1], 200)
}

// mountsUse reports whether an enabled row, at any depth, mounts use.
func mountsUse(rows []profiles.Row, use string) bool {
	for _, r := range rows {
		if r.Enabled && (r.Use == use || mountsUse(r.Rows, use)) {
			return true
		}
	}
	return false
}

// notStarted reports whether p is a lazy server's state while no process runs (not
// started yet, or stopped when idle): ready, since its first call starts it.
func notStarted(p mcpclient.Phase) bool {
	return p == mcpclient.PhaseLazy || p == mcpclient.PhaseIdle
}
