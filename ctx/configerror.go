package ctx

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// ErrInvalidConfig is matched (errors.Is) by every [*ConfigError].
var ErrInvalidConfig = errors.New("invalid configuration")

// The kinds of problem a reader of a configuration document reports as the Err of a
// [*ConfigError] (possibly joined with an underlying cause); test them with [errors.Is].
// Profiles and other hosts' server documents use them, so that a problem keeps its kind
// from one reader to the next.
var (
	// ErrSyntax reports a document that does not parse (YAML, JSON or TOML), or a
	// malformed overlay.
	ErrSyntax = errors.New("syntax error")
	// ErrUnknownKey reports a key the document's format does not define.
	ErrUnknownKey = errors.New("unknown key")
	// ErrWrongType reports a value of the wrong type.
	ErrWrongType = errors.New("wrong type")
	// ErrDuplicateKey reports two keys that collide: the same key twice in one map, or
	// names that differ only in case where case does not count.
	ErrDuplicateKey = errors.New("duplicate key")
)

// ConfigError is one configuration problem: where it is (the document, the line, the
// plugin), the key path, and what was expected. It is the one error type for
// configuration in this module: [Decode] and every plugin's Validate return it, and the
// settings file, profiles and the CLI report it. Several problems are joined with
// [errors.Join] in document order (key order for a value without a document); use
// [ConfigErrors] to list them.
//
// Key paths are dotted, with list elements as [i]: "reconnect.maxDelayMs",
// "servers.gh.env.TOKEN", "args[2]". Messages never quote a configuration value that
// could be a secret: they say what kind of value was found.
//
// A ConfigError is not modified after it is returned; it is safe to share.
type ConfigError struct {
	// Source names the document the problem is in, as a reader should see it:
	// `settings file "/home/u/.config/harness/mcp-servers.yaml"`, `profile "web"`,
	// `--stdio gh=npx x`. Empty when the value was not read from a document.
	Source string
	// File is the path of the document when it is a file, for tools; "" otherwise.
	File string
	// Line is the 1-based line in the document, 0 when unknown.
	Line int
	// Plugin names the plugin whose configuration this is, when known.
	Plugin string
	// Key is the key path inside the configuration; "" for a problem with the whole
	// value.
	Key string
	// Msg says what was expected (and what kind of value was found).
	Msg string
	// Err is an underlying cause, if any (matched by errors.Is and errors.As).
	Err error
}

// Error formats the problem as
//
//	[SOURCE: ][line N: ][plugin "P": ]key "K": MSG
//
// and, without a key, `plugin "P": invalid config: MSG`.
func (e *ConfigError) Error() string {
	var b strings.Builder
	sep := func() {
		if b.Len() > 0 {
			b.WriteString(": ")
		}
	}
	if e.Source != "" {
		b.WriteString(e.Source)
	}
	if e.Line > 0 {
		sep()
		b.WriteString("line ")
		b.WriteString(strconv.Itoa(e.Line))
	}
	if e.Plugin != "" {
		sep()
		fmt.Fprintf(&b, "plugin %q", e.Plugin)
	}
	msg := e.Msg
	if msg == "" && e.Err != nil {
		msg = e.Err.Error()
	}
	switch {
	case e.Key != "":
		sep()
		fmt.Fprintf(&b, "key %q", e.Key)
	case e.Plugin != "" && e.Source == "":
		b.WriteString(": invalid config")
	}
	sep()
	b.WriteString(msg)
	return b.String()
}

// Unwrap returns the cause, if any.
func (e *ConfigError) Unwrap() error { return e.Err }

// Is reports whether target is [ErrInvalidConfig].
func (e *ConfigError) Is(target error) bool { return target == ErrInvalidConfig }

// ConfigErrors lists the problems in err, flattening [errors.Join] (also below a
// wrapping error): each *ConfigError as is, an error that reads as one (errors.As) as
// that, and any other error as a *ConfigError whose Msg is its text and Err the error
// itself. It returns nil for a nil err.
func ConfigErrors(err error) []*ConfigError {
	list, _ := configErrors(err)
	return list
}

// configErrors is ConfigErrors, reporting whether err held a configuration problem at all.
func configErrors(err error) ([]*ConfigError, bool) {
	if err == nil {
		return nil, false
	}
	if ce, ok := err.(*ConfigError); ok { //nolint:errorlint // err itself; wrapped problems are found below
		return []*ConfigError{ce}, true
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []*ConfigError
		found := false
		for _, e := range j.Unwrap() {
			l, f := configErrors(e)
			out, found = append(out, l...), found || f
		}
		return out, found
	}
	var ce *ConfigError
	if a, ok := err.(interface{ As(any) bool }); ok && a.As(&ce) {
		return []*ConfigError{ce}, true
	}
	if u, ok := err.(interface{ Unwrap() error }); ok {
		if l, found := configErrors(u.Unwrap()); found {
			return l, true
		}
	}
	return []*ConfigError{{Msg: err.Error(), Err: err}}, false
}

// JoinConfigErrors returns nil, the only problem, or the problems joined with
// [errors.Join], in the order given.
func JoinConfigErrors(list []*ConfigError) error {
	switch len(list) {
	case 0:
		return nil
	case 1:
		return list[0]
	}
	errs := make([]error, len(list))
	for i, e := range list {
		errs[i] = e
	}
	return errors.Join(errs...)
}

// PlaceConfigErrors returns the problems of err moved into a document: each gets source
// and file (when it has none), plugin (when it has none), and prefix prepended to its key
// path ("servers.gh." + "url"); line, when not nil, gives the line of a full key path (0
// when unknown). Problems are then ordered by line, so that they read in document order.
// It returns nil for a nil err; the problems of err are not modified.
func PlaceConfigErrors(err error, source, file, plugin, prefix string, line func(key string) int) error {
	list := ConfigErrors(err)
	if len(list) == 0 {
		return nil
	}
	out := make([]*ConfigError, len(list))
	for i, e := range list {
		c := *e
		if c.Source == "" {
			c.Source, c.File = source, file
		}
		if c.Plugin == "" {
			c.Plugin = plugin
		}
		c.Key = JoinKey(prefix, c.Key)
		if c.Line == 0 && line != nil {
			c.Line = line(c.Key)
		}
		out[i] = &c
	}
	slices.SortStableFunc(out, func(a, b *ConfigError) int {
		switch {
		case a.Line == b.Line, a.Line == 0 || b.Line == 0:
			return 0
		}
		return a.Line - b.Line
	})
	return JoinConfigErrors(out)
}

// JoinKey joins a key path prefix and a key path: "servers.gh" and "url" give
// "servers.gh.url", "args" and "[1]" give "args[1]". A trailing dot on prefix is allowed.
func JoinKey(prefix, key string) string {
	prefix = strings.TrimSuffix(prefix, ".")
	switch {
	case prefix == "":
		return key
	case key == "":
		return prefix
	case strings.HasPrefix(key, "["):
		return prefix + key
	}
	return prefix + "." + key
}

// Problems collects configuration problems in the order they are found, for a Validate
// method:
//
//	func (c Config) Validate() error {
//		var p ctx.Problems
//		if c.Port < 0 {
//			p.Add("port", "must not be negative, got %d", c.Port)
//		}
//		return p.Err()
//	}
//
// The zero value is ready to use. A Problems is not safe for concurrent use.
type Problems struct {
	list []*ConfigError
}

// Add records a problem at key (a key path; "" for the whole value).
func (p *Problems) Add(key, format string, args ...any) {
	p.list = append(p.list, &ConfigError{Key: key, Msg: fmt.Sprintf(format, args...)})
}

// Require records the problem "required: WHAT" at key when value is empty: the check of a
// required string, such as a remote method's server or session parameter.
func (p *Problems) Require(key, value, what string) {
	if value == "" {
		p.Add(key, "required: %s", what)
	}
}

// AddError records the problems of err (see [ConfigErrors]) under the key path prefix.
func (p *Problems) AddError(prefix string, err error) {
	for _, e := range ConfigErrors(err) {
		c := *e
		c.Key = JoinKey(prefix, c.Key)
		p.list = append(p.list, &c)
	}
}

// Len returns the number of problems recorded.
func (p *Problems) Len() int { return len(p.list) }

// SortByKey orders the problems by key path (stable), for checks whose order would
// otherwise depend on map iteration.
func (p *Problems) SortByKey() {
	slices.SortStableFunc(p.list, func(a, b *ConfigError) int { return strings.Compare(a.Key, b.Key) })
}

// Err returns nil, the one problem, or all of them joined, in the order recorded.
func (p *Problems) Err() error { return JoinConfigErrors(p.list) }
