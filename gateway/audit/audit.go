// Package audit is a team gateway's audit trail: one [Entry] per tool call (who, on which
// server, which tool, the outcome, how long it took, the arguments with the values of
// secret-looking keys masked), appended to a [Log]: a JSON Lines file ([File]) for one
// process, or Redis (gateway/redisstore) shared by the replicas, and read back with a
// [Query] (harness gateway audit).
//
// A [Writer] takes entries off the calls' path: [Writer.Add] never blocks on the log, and a
// goroutine appends what came meanwhile in one batch (one write and one fsync for a file,
// one pipeline for Redis). What a crash loses is the last batch not yet written: at most
// FlushInterval of calls.
package audit

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/cordisgo/harness/internal/jsonl"
	"github.com/cordisgo/harness/internal/words"
)

// Outcomes of a call, besides the tool registry's error codes (denied, invalid_arguments,
// timeout, tool_error, …), which an entry carries as they are.
const (
	OK = "ok"
)

// Entry is one tool call through the gateway. It is a plain value.
type Entry struct {
	// Time is when the call began (UTC).
	Time time.Time `json:"time"`
	// Person is the signed-in person the call was made for ("" with the shared token), and
	// Groups their groups.
	Person string   `json:"person,omitempty"`
	Groups []string `json:"groups,omitempty"`
	// Replica is the replica that served it.
	Replica string `json:"replica,omitempty"`
	// Route is the route's path; Server and Tool the MCP server and its tool's own name
	// (Server "harness" for the tools of no MCP server).
	Route  string `json:"route"`
	Server string `json:"server"`
	Tool   string `json:"tool"`
	// Outcome is "ok" or the tool registry's code (denied, timeout, tool_error, …); Error
	// says why, for a call that failed.
	Outcome string `json:"outcome"`
	Error   string `json:"error,omitempty"`
	// DurationMs is how long the call took.
	DurationMs int64 `json:"durationMs"`
	// Args are the arguments, the values of secret-looking keys masked.
	Args json.RawMessage `json:"args,omitempty"`
	// Session is the first characters of the session's ID.
	Session string `json:"session,omitempty"`
}

// Query selects entries. Its zero value selects the newest DefaultLimit entries.
type Query struct {
	// Person, Server, Tool and Outcome, when set, must equal the entry's.
	Person, Server, Tool, Outcome string
	// Since, when set, excludes entries before it.
	Since time.Time
	// Limit bounds the number of entries, the newest kept (0: DefaultLimit).
	Limit int
}

// DefaultLimit is Query.Limit's default.
const DefaultLimit = 100

// Match reports whether e is selected by q (its limit aside).
func (q Query) Match(e Entry) bool {
	return (q.Person == "" || e.Person == q.Person) && (q.Server == "" || e.Server == q.Server) &&
		(q.Tool == "" || e.Tool == q.Tool) && (q.Outcome == "" || e.Outcome == q.Outcome) &&
		(q.Since.IsZero() || !e.Time.Before(q.Since))
}

// Log is where entries are kept. Implementations are safe for concurrent use.
type Log interface {
	// Append appends entries, in order, durably: once it returns nil they survive a crash
	// of the process (and, for a server, as far as its own durability goes).
	Append(cx context.Context, entries []Entry) error
	// Query returns the newest entries q selects, oldest first.
	Query(cx context.Context, q Query) ([]Entry, error)
}

// File is a [Log] in a JSON Lines file (internal/jsonl): each Append is one write of whole
// lines to a file opened for appending (mode 0600), then an fsync. Query reads the whole
// file. It is safe for concurrent use within a process; several processes may append to one
// file (each write appends whole lines).
type File struct {
	lines *jsonl.File[Entry]
}

// OpenFile opens (creating) the audit file at path.
func OpenFile(path string) (*File, error) {
	lines, err := jsonl.Open[Entry](path, os.O_CREATE, jsonl.Options{Sync: true})
	if err != nil {
		return nil, fmt.Errorf("audit file: %w", err)
	}
	return &File{lines: lines}, nil
}

// Path returns the file's path.
func (l *File) Path() string { return l.lines.Path() }

// Append implements [Log].
func (l *File) Append(_ context.Context, entries []Entry) error {
	if err := l.lines.Append(entries...); err != nil {
		return fmt.Errorf("audit file %s: %w", l.Path(), err)
	}
	return nil
}

// Query implements [Log].
func (l *File) Query(_ context.Context, q Query) ([]Entry, error) {
	return ReadFile(l.Path(), q)
}

// Close closes the file.
func (l *File) Close() error { return l.lines.Close() }

// ReadFile returns the newest entries of the audit file at path that q selects, oldest
// first. A line that is not an entry (a write cut short by a crash) is skipped.
func ReadFile(path string, q Query) ([]Entry, error) {
	limit := q.Limit
	if limit <= 0 {
		limit = DefaultLimit
	}
	var out []Entry
	_, err := jsonl.ReadFile(path, func(e Entry) {
		if q.Match(e) {
			out = append(out, e)
			if len(out) > 2*limit {
				out = slices.Delete(out, 0, len(out)-limit)
			}
		}
	}, nil)
	if err != nil {
		return nil, fmt.Errorf("audit file: %w", err)
	}
	if len(out) > limit {
		out = out[len(out)-limit:]
	}
	return out, nil
}

// FlushInterval is the longest an entry waits in a [Writer] before it is appended.
const FlushInterval = 100 * time.Millisecond

// maxPending bounds the entries a Writer holds while its log is slow or down: the oldest
// are dropped past it (and counted in the error it logs).
const maxPending = 100_000

// Writer batches entries for a [Log] on a goroutine of its own. It is safe for concurrent
// use; Add never blocks on the log.
type Writer struct {
	log     Log
	onError func(error)

	mu      sync.Mutex
	pending []Entry
	dropped int
	wake    chan struct{}
	done    chan struct{}
	closed  bool
	closing context.Context // Close's: when it ends, a failing log's entries are given up
}

// NewWriter starts a writer for log; onError is told of each failed append (the entries are
// kept and retried with the next batch).
func NewWriter(log Log, onError func(error)) *Writer {
	w := &Writer{log: log, onError: onError, wake: make(chan struct{}, 1), done: make(chan struct{})}
	go w.run()
	return w
}

// Add queues e.
func (w *Writer) Add(e Entry) {
	w.mu.Lock()
	if !w.closed {
		w.pending = append(w.pending, e)
		if len(w.pending) > maxPending {
			w.dropped += len(w.pending) - maxPending
			w.pending = slices.Delete(w.pending, 0, len(w.pending)-maxPending)
		}
	}
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

func (w *Writer) run() {
	defer close(w.done)
	for {
		w.mu.Lock()
		closed, closing := w.closed, w.closing
		w.mu.Unlock()
		had, err := w.flush()
		switch {
		case closed && !had:
			return
		case closed && err != nil && closing.Err() != nil:
			w.mu.Lock()
			lost := len(w.pending)
			w.pending = nil
			w.mu.Unlock()
			if w.onError != nil {
				w.onError(fmt.Errorf("audit: %d entries not appended before the close's deadline: %w", lost, err))
			}
			return
		case closed && err == nil:
			continue // what came meanwhile
		case err == nil:
			<-w.wake
		}
		// Let a burst gather, or a failing log recover: one append per interval at most.
		time.Sleep(FlushInterval) //nolint:forbidigo // batching and retrying, not waiting for a state
	}
}

// flush appends what is pending: had reports whether anything was, and a failed batch goes
// back to the front of what is pending.
func (w *Writer) flush() (had bool, err error) {
	w.mu.Lock()
	batch := w.pending
	w.pending = nil
	dropped := w.dropped
	w.dropped = 0
	w.mu.Unlock()
	if dropped > 0 && w.onError != nil {
		w.onError(fmt.Errorf("audit: %d entries dropped: the log was too slow or down", dropped))
	}
	if len(batch) == 0 {
		return false, nil
	}
	cx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := w.log.Append(cx, batch); err != nil {
		if w.onError != nil {
			w.onError(err)
		}
		w.mu.Lock()
		w.pending = append(batch, w.pending...)
		w.mu.Unlock()
		return true, err
	}
	return true, nil
}

// Close appends what is pending (retrying a failing log until cx ends) and stops the
// writer; it returns cx's error if the writer had not stopped by then.
func (w *Writer) Close(cx context.Context) error {
	w.mu.Lock()
	w.closed, w.closing = true, cx
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
	select {
	case <-w.done:
		return nil
	case <-cx.Done():
		return cx.Err()
	}
}

// Print writes entries as a table for a person to read: time, who, server/tool, outcome,
// duration, arguments (cut at 60 characters). Text that came from clients is shown as
// text: clean it for a terminal before (termsafe.Writer).
func Print(w io.Writer, entries []Entry) error {
	if len(entries) == 0 {
		_, err := fmt.Fprintln(w, "no calls recorded (that match)")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TIME\tWHO\tCALL\tOUTCOME\tMS\tARGUMENTS")
	for _, e := range entries {
		who := e.Person
		if who == "" {
			who = "-"
		}
		outcome := e.Outcome
		if e.Error != "" && e.Outcome != OK {
			outcome += ": " + words.Clip(e.Error, 80)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s/%s\t%s\t%d\t%s\n", e.Time.Local().Format("2006-01-02 15:04:05"), who, e.Server, e.Tool,
			outcome, e.DurationMs, words.Clip(string(e.Args), 60))
	}
	return tw.Flush()
}
