package session

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/cordisgo/harness/internal/jsonl"
	"github.com/cordisgo/harness/internal/userdirs"
	"github.com/cordisgo/harness/internal/words"
	"github.com/cordisgo/harness/plugins/model"
)

// ErrUnknownSession: no session of that id in the store.
var ErrUnknownSession = errors.New("agent: unknown session")

// DefaultDir returns the directory session logs go to by default: harness/sessions in the
// user's state directory (userdirs.Env.State): $XDG_STATE_HOME/harness/sessions, else
// ~/.local/state/harness/sessions (on macOS ~/Library/Application Support/harness/sessions,
// on Windows %LocalAppData%). getenv reads the environment (os.Getenv when nil), so a
// command can resolve it for the environment it was given.
func DefaultDir(getenv func(string) string) (string, error) {
	dir, err := userdirs.Env{Getenv: getenv}.State()
	if err != nil {
		return "", fmt.Errorf("agent: no state directory for sessions: %w", err)
	}
	return filepath.Join(dir, "harness", "sessions"), nil
}

// Store keeps session logs: one directory per session under Dir, holding events.jsonl
// (the append-only event log, one JSON event per line) and results/ (the whole text of
// results the model got a preview of).
//
// A Store is safe for concurrent use; a session's log is written by its session only.
type Store struct {
	dir   string              // "" keeps nothing
	scrub func([]byte) []byte // masks a line before it is written; nil: none
}

// logName is the event log's file name in a session's directory.
const logName = "events.jsonl"

// OpenStore returns the store of the directory dir ("" is a store that keeps nothing:
// sessions live in memory only). The directory is created when the first session is.
func OpenStore(dir string) *Store { return &Store{dir: dir} }

// WithScrub returns a store of the same directory whose logs pass every line through scrub
// before it is written: the host's secret scrubber (secrets.Scrubber.ReplaceJSON), so that
// a secret a tool printed or the model repeated is never stored. The session in memory is
// not changed; a resumed session reads the masked text.
func (s *Store) WithScrub(scrub func([]byte) []byte) *Store {
	return &Store{dir: s.dir, scrub: scrub}
}

// Dir returns the store's directory ("" for a store that keeps nothing).
func (s *Store) Dir() string { return s.dir }

// SessionDir returns the directory of session id.
func (s *Store) SessionDir(id string) string { return filepath.Join(s.dir, id) }

// NewID makes a session id: its creation time (sortable) and a random suffix.
func NewID(now time.Time) string {
	var b [3]byte
	_, _ = rand.Read(b[:])
	return now.UTC().Format("20060102-150405") + "-" + hex.EncodeToString(b[:])
}

// ValidID reports whether id can name a session directory (no path elements).
func ValidID(id string) bool {
	if id == "" || len(id) > 128 || id == "." || id == ".." {
		return false
	}
	for _, r := range id {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}

// File appends events to one session's log file (an internal/jsonl file that fails every
// write after one that failed, so that the log stays a prefix of the session's events).
//
// A File is safe for concurrent use.
type File struct {
	lines *jsonl.File[*Event]
}

// Create makes the directory and the log of a new session id (0700 and 0600).
func (s *Store) Create(id string) (*File, error) {
	dir := s.SessionDir(id)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("agent: session log: %w", err)
	}
	return s.open(id, os.O_CREATE|os.O_EXCL)
}

// Reopen opens the log of session id for appending, cutting a torn last line (size is the
// length of the complete lines, as [Store.ReadSize] returns it).
func (s *Store) Reopen(id string, size int64) (*File, error) {
	l, err := s.open(id, 0)
	if err != nil {
		return nil, err
	}
	if err := l.lines.Cut(size); err != nil {
		_ = l.Close()
		return nil, fmt.Errorf("agent: session log %s: dropping the torn tail: %w", l.lines.Path(), err)
	}
	return l, nil
}

// open opens the log of session id for appending, with flag's further bits.
func (s *Store) open(id string, flag int) (*File, error) {
	lines, err := jsonl.Open[*Event](filepath.Join(s.SessionDir(id), logName), flag, jsonl.Options{Scrub: s.scrub, StopAtError: true})
	if err != nil {
		return nil, fmt.Errorf("agent: session log: %w", err)
	}
	return &File{lines: lines}, nil
}

// Write appends one event as a line. One write call per line: a crash leaves at worst a
// torn last line, which reading drops. After a failed write every later one fails with
// the same error.
func (l *File) Write(ev *Event) error { return l.lines.Append(ev) }

// Close closes the file; it is idempotent.
func (l *File) Close() error { return l.lines.Close() }

// Read returns the events of session id's log. A last line that is incomplete or not
// JSON (the process died while writing it) is dropped; any other bad line is an error
// naming the file and the line.
func (s *Store) Read(id string) ([]Event, error) {
	events, _, err := s.ReadSize(id)
	return events, err
}

// ReadSize returns the events of session id's log and the length of its complete lines.
func (s *Store) ReadSize(id string) ([]Event, int64, error) {
	if s.dir == "" {
		return nil, 0, fmt.Errorf("%w %q: sessions are not stored", ErrUnknownSession, id)
	}
	if !ValidID(id) {
		return nil, 0, fmt.Errorf("%w %q: not a session id", ErrUnknownSession, id)
	}
	p := filepath.Join(s.SessionDir(id), logName)
	var events []Event
	size, err := jsonl.ReadFile(p, func(ev Event) { events = append(events, ev) }, func(line int, last bool, err error) error {
		if last { // torn by a crash mid-write
			return nil
		}
		return fmt.Errorf("agent: session log %s: line %d: %w", p, line, err)
	})
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0, fmt.Errorf("%w %q (no %s)", ErrUnknownSession, id, p)
	}
	if err != nil {
		return nil, 0, err
	}
	if len(events) == 0 || events[0].Type != EventSession || events[0].Header == nil {
		return nil, 0, fmt.Errorf("agent: session log %s: no session header", p)
	}
	return events, size, nil
}

// Info summarizes a session.
type Info struct {
	ID    string `json:"id"`
	Agent string `json:"agent,omitempty"`
	Model string `json:"model,omitempty"`
	// Mode is "ptc" for a session in PTC mode, "" for standard mode.
	Mode    string    `json:"mode,omitempty"`
	Parent  string    `json:"parent,omitempty"`
	Created time.Time `json:"created"`
	Updated time.Time `json:"updated"`
	// Turns counts the user's messages.
	Turns int `json:"turns"`
	// Profile is the profile the session was made under; ResumedUnder, when set, the other
	// profile it was last resumed under.
	Profile      string `json:"profile,omitempty"`
	ResumedUnder string `json:"resumedUnder,omitempty"`
	// Title is the start of the first user message.
	Title string `json:"title,omitempty"`
	// Usage sums the session's requests.
	Usage UsageTotal `json:"usage"`
	// Err is set when the log could not be read.
	Err string `json:"error,omitempty"`
}

// UsageTotal sums token usage: a session's own model requests, and what the subagents it
// delegated to used (their tokens and cost, not their requests, which are their sessions').
type UsageTotal struct {
	Requests         int `json:"requests"`
	PromptTokens     int `json:"promptTokens"`
	CompletionTokens int `json:"completionTokens"`
	CacheHitTokens   int `json:"cacheHitTokens"`
	// Cost is the requests' cost in US dollars (model.Usage.Cost; 0 when no price was
	// known).
	Cost float64 `json:"cost,omitempty"`
}

// List summarizes the stored sessions, newest first.
func (s *Store) List() ([]Info, error) {
	if s.dir == "" {
		return nil, nil
	}
	entries, err := os.ReadDir(s.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Info
	for _, e := range entries {
		if !e.IsDir() || !ValidID(e.Name()) {
			continue
		}
		if _, err := os.Stat(filepath.Join(s.dir, e.Name(), logName)); err != nil {
			continue
		}
		out = append(out, s.info(e.Name()))
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].Created.Equal(out[j].Created) {
			return out[i].Created.After(out[j].Created)
		}
		return out[i].ID > out[j].ID
	})
	return out, nil
}

// Last is the id that names the most recently updated top-level session of a store
// (not a subagent's): `harness chat --resume last`, `sessions show last`.
const Last = "last"

// minPrefix is the shortest beginning of a session id that [Store.Resolve] completes: the
// date and time of day ("20261205-043743"), as people copy them from sessions list.
const minPrefix = len("20060102-1504")

// Resolve returns the session id names: [Last] is the most recently updated
// top-level session (an [ErrUnknownSession] when the store has none); the beginning of
// exactly one stored id, at least the date and the time to the minute long and not itself
// a stored id, is that id (as git takes a short hash); any other id is returned as it is.
func (s *Store) Resolve(id string) (string, error) {
	if id != Last {
		return s.complete(id), nil
	}
	infos, err := s.List()
	if err != nil {
		return "", err
	}
	best := -1
	for i, in := range infos {
		if in.Parent == "" && in.Err == "" && (best < 0 || in.Updated.After(infos[best].Updated)) {
			best = i
		}
	}
	if best < 0 {
		return "", fmt.Errorf("%w: %q: no stored session yet", ErrUnknownSession, id)
	}
	return infos[best].ID, nil
}

// complete returns the stored id that id is the unique beginning of, or id.
func (s *Store) complete(id string) string {
	if s.dir == "" || len(id) < minPrefix || !ValidID(id) {
		return id
	}
	if _, err := os.Stat(filepath.Join(s.SessionDir(id), logName)); err == nil {
		return id
	}
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		return id
	}
	match := ""
	for _, e := range entries {
		if e.IsDir() && strings.HasPrefix(e.Name(), id) {
			if match != "" {
				return id // ambiguous: the caller's error names the candidates
			}
			match = e.Name()
		}
	}
	if match == "" {
		return id
	}
	return match
}

// Info summarizes session id.
func (s *Store) Info(id string) (Info, error) {
	if _, _, err := s.ReadSize(id); err != nil {
		return Info{}, err
	}
	return s.info(id), nil
}

func (s *Store) info(id string) Info {
	info := Info{ID: id}
	events, _, err := s.ReadSize(id)
	if err != nil {
		info.Err = err.Error()
		return info
	}
	summarize(&info, events)
	return info
}

// Summarize describes the session whose durable events (its header first) are events.
func Summarize(events []Event) Info {
	info := Info{ID: events[0].Header.ID}
	summarize(&info, events)
	return info
}

// summarize fills info from a session's events.
func summarize(info *Info, events []Event) {
	h := events[0].Header
	info.Agent, info.Model, info.Mode, info.Parent, info.Created = h.Agent, h.Model, h.Mode, h.Parent, h.Created
	info.Updated = events[len(events)-1].Time
	info.Profile = h.Profile
	for _, ev := range events {
		switch ev.Type {
		case EventSession:
			if ev.Header != nil && ev.Header.Profile != "" {
				info.ResumedUnder = ev.Header.Profile
				if ev.Header.Profile == h.Profile {
					info.ResumedUnder = ""
				}
			}
		case EventUser:
			info.Turns++
			if info.Title == "" {
				info.Title = Title(ev.Text)
			}
		case EventUsage:
			info.Usage.AddEvent(ev)
		}
	}
}

// Add counts one request's usage.
func (u *UsageTotal) Add(v model.Usage) {
	u.Requests++
	u.PromptTokens += v.PromptTokens
	u.CompletionTokens += v.CompletionTokens
	u.CacheHitTokens += v.CacheHitTokens
	u.Cost += v.Cost
}

// AddEvent counts a usage event of a session's log or stream: the session's own request
// (Agent ""), or a subagent's whole run folded into the session by the delegating call
// (Agent and Call set). A subagent's per-request events forwarded live (Agent set, no Call)
// are not counted: the folded event counts them once.
func (u *UsageTotal) AddEvent(ev Event) {
	switch {
	case ev.Type != EventUsage || ev.Usage == nil:
	case ev.Agent == "":
		u.Add(*ev.Usage)
	case ev.Call != nil:
		u.PromptTokens += ev.Usage.PromptTokens
		u.CompletionTokens += ev.Usage.CompletionTokens
		u.CacheHitTokens += ev.Usage.CacheHitTokens
		u.Cost += ev.Usage.Cost
	}
}

// Title is the first line of s, cut to 80 characters: a session's title, a question's gist.
func Title(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return words.Clip(s, 80)
}
