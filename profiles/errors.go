package profiles

import (
	"errors"
	"fmt"
	"strings"

	"github.com/cordisgo/harness/ctx"
)

// Sentinel errors classify every [*Error]; test them with [errors.Is].
var (
	// ErrNotFound reports a profile that does not exist: an unknown built-in
	// name, a missing file, or a missing profile named by extends.
	ErrNotFound = errors.New("profile not found")
	// ErrSyntax reports a document that does not parse (YAML or JSON) or a
	// malformed --set argument or HARNESS_* variable name. It is [ctx.ErrSyntax], as
	// ErrUnknownKey, ErrType and ErrDuplicate are ctx's kinds: a problem of another
	// host's document read as a profile keeps its kind.
	ErrSyntax = ctx.ErrSyntax
	// ErrUnknownKey reports a key the profile format does not define.
	ErrUnknownKey = ctx.ErrUnknownKey
	// ErrType reports a value of the wrong type.
	ErrType = ctx.ErrWrongType
	// ErrUnknownPlugin reports a row whose use names no plugin of the catalog.
	ErrUnknownPlugin = errors.New("unknown plugin")
	// ErrDuplicate reports two keys that collide: the same key twice in one
	// map, or sibling row ids that differ only in case.
	ErrDuplicate = ctx.ErrDuplicateKey
	// ErrInvalid reports any other invalid value: a bad id, a row without
	// use, an extends cycle, an overlay that cannot apply.
	ErrInvalid = errors.New("invalid profile")
)

// Error describes what is wrong with a profile or an imported document, and
// where. Every error returned by this package is an *Error.
//
// Its message reads, for example:
//
//	profile "my.yaml": line 4: key "plugins.gh.enabled": expected a boolean, got string "yes"
//	profile "default": --set plugins.demo.enabled: key "plugins.demo.enabled": expected a boolean, got string "yes"
//	mcp import "claude.json": key "mcpServers.gh.args": expected a list of strings, got number 5
type Error struct {
	// Op names what was being read: "profile" (Load; also when empty) or
	// "mcp import" ([ImportServers]).
	Op string
	// Source is the profile name or file path given to Load, or the source
	// given to [ImportServers].
	Source string
	// Layer says where the offending value came from when that is not the
	// Source document itself: `extends "web"`, `--set plugins.demo.enabled`,
	// `$HARNESS_PLUGINS__DEMO__ENABLED`. Empty for the Source document.
	Layer string
	// Line is the 1-based line in the document the error points at, 0 when
	// unknown or not applicable.
	Line int
	// Path is the dotted key path, e.g. "plugins.gh.enabled"; empty for
	// errors about a whole document or argument.
	Path string
	// Msg says what was expected and what was found.
	Msg string
	// Err is one of the sentinel errors, possibly joined with an
	// underlying cause such as an fs.ErrNotExist.
	Err error
}

// Error formats the error as `profile "SOURCE": [LAYER[, line N]: ][key "PATH": ]MSG`.
func (e *Error) Error() string {
	var b strings.Builder
	op := e.Op
	if op == "" {
		op = "profile"
	}
	fmt.Fprintf(&b, "%s %q", op, e.Source)
	switch {
	case e.Layer != "" && e.Line > 0:
		fmt.Fprintf(&b, ": %s, line %d", e.Layer, e.Line)
	case e.Layer != "":
		fmt.Fprintf(&b, ": %s", e.Layer)
	case e.Line > 0:
		fmt.Fprintf(&b, ": line %d", e.Line)
	}
	if e.Path != "" {
		fmt.Fprintf(&b, ": key %q", e.Path)
	}
	b.WriteString(": ")
	b.WriteString(e.Msg)
	return b.String()
}

// Unwrap returns the sentinel (and cause) behind the error.
func (e *Error) Unwrap() error { return e.Err }

// As lets errors.As (and [ctx.ConfigErrors]) read the error as the module's one
// configuration problem type, [*ctx.ConfigError]: Source names the document and layer
// (`profile "my.yaml": --set plugins.a.enabled`), File the document when it is a file,
// Key the key path.
func (e *Error) As(target any) bool {
	t, ok := target.(**ctx.ConfigError)
	if !ok {
		return false
	}
	op := e.Op
	if op == "" {
		op = "profile"
	}
	source := fmt.Sprintf("%s %q", op, e.Source)
	if e.Layer != "" {
		source += ": " + e.Layer
	}
	file := ""
	if isPath(e.Source) && e.Layer == "" {
		file = e.Source
	}
	*t = &ctx.ConfigError{Source: source, File: file, Line: e.Line, Key: e.Path, Msg: e.Msg, Err: e.Err}
	return true
}

// joinPath renders a key path for messages.
func joinPath(path []string) string { return strings.Join(path, ".") }
