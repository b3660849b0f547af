package secrets

import (
	"encoding/json"
	"slices"
	"strings"
	"sync"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/internal/redact"
)

// Minimum lengths of the values a [Scrubber] masks: shorter ones would mangle ordinary text
// ("1", "true") while hiding nothing worth hiding. A secret (a ${secret:…} value, an API
// key, a token) is masked from MinSecret bytes; any other configured value (an env or
// header value that is not known to be a secret) from MinValue.
const (
	MinSecret = 4
	MinValue  = 8
)

// ScrubberKey is the host's scrubber: the one set of sensitive values that everything
// writing text somewhere durable or shared (the agent's session logs, the page's event
// stream) masks. The host provides it in the root before any row mounts; the MCP clients
// add their servers' secrets as they resolve them, the model plugin its API keys, the
// clients' OAuth authorizers the tokens they use. A tree without a host has none, and
// [ScrubberOf] then returns nil, which masks nothing.
var ScrubberKey = ctx.NewKey[*Scrubber]("secretScrubber")

// ScrubberOf returns c's scrubber, or nil when nothing provides one.
func ScrubberOf(c *ctx.Context) *Scrubber {
	s, _ := ScrubberKey.Get(c)
	return s
}

// Scrubber is a set of sensitive values and the masking of them in text: every value is
// replaced by [redact.Marker], longest first, so that a value containing another is masked
// whole. It only grows: a value once seen stays masked (a rotated token is still worth
// hiding).
//
// A Scrubber is safe for concurrent use; the zero value is empty and ready. The methods
// of a nil *Scrubber do nothing and mask nothing, so that code holding an optional one
// needs no checks.
type Scrubber struct {
	mu   sync.Mutex
	vals map[string]struct{}
	repl *strings.Replacer // nil when stale; rebuilt under mu on the next use
	// jsonRepl masks the values as they appear inside JSON strings too (escaped once and
	// twice: a tool's result that is itself JSON, carried in a JSON event).
	jsonRepl *strings.Replacer
}

// AddSecret adds a value known to be a secret (MinSecret bytes or longer) and, for a
// credential written with its scheme ("Bearer <token>"), the token alone.
func (s *Scrubber) AddSecret(v string) { s.add(v, MinSecret) }

// AddValue adds a configured value that may be a credential (an env or header value),
// when it is at least MinValue bytes long, and its token as [Scrubber.AddSecret] does.
func (s *Scrubber) AddValue(v string) { s.add(v, MinValue) }

// AddResolver adds the values r substituted that must be masked ([Resolver.Sensitive]: the
// secrets and the values of secret-looking variables).
func (s *Scrubber) AddResolver(r *Resolver) {
	if r == nil {
		return
	}
	for _, v := range r.sensitive {
		s.AddSecret(v)
	}
}

// AddAll adds every value of other.
func (s *Scrubber) AddAll(other *Scrubber) {
	for _, v := range other.Values() {
		s.AddSecret(v)
	}
}

func (s *Scrubber) add(v string, min int) {
	if s == nil {
		return
	}
	var add []string
	if len(v) >= min {
		add = append(add, v)
	}
	if _, tok, ok := strings.Cut(strings.TrimSpace(v), " "); ok && len(strings.TrimSpace(tok)) >= MinValue {
		add = append(add, strings.TrimSpace(tok)) // "Bearer <token>": the token may show up alone
	}
	if len(add) == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.vals == nil {
		s.vals = make(map[string]struct{})
	}
	for _, a := range add {
		if _, ok := s.vals[a]; !ok {
			s.vals[a] = struct{}{}
			s.repl, s.jsonRepl = nil, nil
		}
	}
}

// Values returns the values, longest first.
func (s *Scrubber) Values() []string {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sortedLocked()
}

func (s *Scrubber) sortedLocked() []string {
	vals := make([]string, 0, len(s.vals))
	for v := range s.vals {
		vals = append(vals, v)
	}
	slices.SortFunc(vals, func(a, b string) int {
		if d := len(b) - len(a); d != 0 {
			return d
		}
		return strings.Compare(a, b)
	})
	return vals
}

// Empty reports whether there is nothing to mask.
func (s *Scrubber) Empty() bool {
	if s == nil {
		return true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.vals) == 0
}

// Replace returns text with every value masked.
func (s *Scrubber) Replace(text string) string {
	if s == nil {
		return text
	}
	if r := s.replacer(&s.repl, func(vals []string) []string { return vals }); r != nil {
		return r.Replace(text)
	}
	return text
}

// ReplaceJSON returns the JSON text b with every value masked where it appears inside a
// string: as it is, and escaped as JSON once and twice (a value with a quote, a backslash
// or a control character in a result that is itself JSON). The result is valid JSON when b
// is: the marker needs no escaping.
func (s *Scrubber) ReplaceJSON(b []byte) []byte {
	if s == nil {
		return b
	}
	if r := s.replacer(&s.jsonRepl, jsonForms); r != nil {
		return []byte(r.Replace(string(b)))
	}
	return b
}

// replacer returns the replacer kept in *slot (s.repl or s.jsonRepl), which masks each of
// the texts forms lists for the values (sorted as sortedLocked sorts them), building it
// when the values changed since; nil when there are no values.
func (s *Scrubber) replacer(slot **strings.Replacer, forms func(vals []string) []string) *strings.Replacer {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.vals) == 0 {
		return nil
	}
	if *slot == nil {
		fs := forms(s.sortedLocked())
		pairs := make([]string, 0, 2*len(fs))
		for _, f := range fs {
			pairs = append(pairs, f, redact.Marker)
		}
		*slot = strings.NewReplacer(pairs...)
	}
	return *slot
}

// jsonForms lists the forms of vals inside JSON strings, longest first: each value escaped
// once and twice, and as it is where escaping leaves it alone.
func jsonForms(vals []string) []string {
	seen := make(map[string]bool, 3*len(vals))
	var forms []string
	for _, v := range vals {
		once := jsonEscape(v)
		for _, f := range []string{once, jsonEscape(once), v} {
			// The raw form of a value with characters JSON escapes cannot appear in
			// JSON text; replacing it could cut an escape sequence in two.
			if !seen[f] && (f != v || once == v) {
				seen[f] = true
				forms = append(forms, f)
			}
		}
	}
	slices.SortStableFunc(forms, func(a, b string) int { return len(b) - len(a) })
	return forms
}

// jsonEscape returns v as it appears between the quotes of a JSON string written by
// encoding/json.
func jsonEscape(v string) string {
	b, _ := json.Marshal(v) // a string always marshals
	return string(b[1 : len(b)-1])
}
