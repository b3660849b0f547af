package sysprompt

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/cordisgo/harness/ctx"
)

// Section is one named piece of the system prompt.
//
// A Section is a plain value; registering it copies it. Render may be called concurrently by
// assemblies running at the same time, and once more after the section is removed by an
// assembly that started before.
type Section struct {
	// Name identifies the section within its layer: 1 to 128 letters, digits, '_', ':', '.',
	// '/' or '-'. A nearer layer's section of the same name shadows it.
	Name string
	// Order places the section: lower first; equal orders are sorted by Name in byte order.
	Order int
	// Text is the section's static text. Leave it empty when Render is set.
	Text string
	// Render, when set, produces the text at every assembly. An error (or a panic) fails the
	// assembly with a [*SectionError] naming the section and its owner.
	Render func(a *Assembly) (string, error)
	// Interpolate substitutes {{name}} references from Assembly.Vars (see the package
	// documentation for the syntax). Off, the text is emitted verbatim and never fails.
	Interpolate bool
}

// SectionError reports a section that failed to render, or whose interpolated text is
// malformed. It names the section and its owner and wraps the cause.
//
// A SectionError is not modified after it is returned.
type SectionError struct {
	// Section is the section's name.
	Section string
	// Owner is the registering scope's name.
	Owner string
	// Err is the cause: a Render error, a [*ctx.PanicError], an error wrapping
	// [ErrMissingVariable] or [ErrTemplate], …
	Err error
}

// Error names the section, its owner and the cause.
func (e *SectionError) Error() string {
	return fmt.Sprintf("system prompt section %q (owner %q): %v", e.Section, e.Owner, e.Err)
}

// Unwrap returns the cause.
func (e *SectionError) Unwrap() error { return e.Err }

// validName reports whether name matches [A-Za-z0-9_:./-]{1,128}.
func validName(name string) bool { return nameOf(name, "_:./-") }

// nameOf reports whether name is 1 to 128 bytes, each an ASCII letter or digit or one of
// punct.
func nameOf(name, punct string) bool {
	if len(name) == 0 || len(name) > 128 {
		return false
	}
	for i := 0; i < len(name); i++ {
		b := name[i]
		if !('a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' || '0' <= b && b <= '9' || strings.IndexByte(punct, b) >= 0) {
			return false
		}
	}
	return true
}

// entry is one registered section. Everything but text, parsed and removed is immutable.
type entry struct {
	name        string
	order       int
	owner       *ctx.Scope
	layer       *ctx.Scope
	reg         *ctx.Context // the registering context: events are dispatched from it
	render      func(*Assembly) (string, error)
	interpolate bool

	text    atomic.Pointer[body]   // static text; nil when render is set
	parsed  atomic.Pointer[parsed] // last parse of Render output (interpolated dynamic sections)
	removed atomic.Bool            // set once the section left its layer
}

// body is a section's static text, parsed once when interpolated.
type body struct {
	src   string    // as registered
	out   string    // the text to emit when segs is nil
	segs  []segment // references to expand; nil when there are none
	blank bool      // out is empty or white space: the section is dropped
}

// parsed caches the template parse of one Render result.
type parsed struct {
	src  string
	segs []segment
}

func (e *entry) sectionError(err error) *SectionError {
	return &SectionError{Section: e.name, Owner: e.owner.Name(), Err: err}
}

func (e *entry) newBody(text string) (*body, error) {
	b := &body{src: text, out: text}
	if e.interpolate {
		segs, err := parseTemplate(text)
		if err != nil {
			return nil, e.sectionError(err)
		}
		if hasRefs(segs) {
			b.segs = segs
		} else { // only literals (escapes resolved): emit as is
			var sb strings.Builder
			for _, sg := range segs {
				sb.WriteString(sg.lit)
			}
			b.out = sb.String()
		}
	}
	b.blank = strings.TrimSpace(b.out) == ""
	return b, nil
}

// Register adds sec to the prompt as an effect of c: the section is removed when the returned
// disposer runs or c's scope unloads. It goes into c's layer (ctx.Context.Layer: the nearest
// agent scope, or the root), and is attributed to c's scope.
//
// It fails when sec is invalid ([ErrInvalidSection]), when an interpolated Text is malformed
// ([ErrTemplate]), when the layer already holds the name ([ErrDuplicateSection]; the message
// names both owners) and when c is inactive ([ctx.ErrInactive]).
func (s *Service) Register(c *ctx.Context, sec Section) (ctx.Disposer, error) {
	h, err := s.Set(c, sec)
	if err != nil {
		return nil, err
	}
	return h.dispose, nil
}

// Set is [Service.Register] returning a [Handle], through which the section's static text can
// later be replaced in place (one [Changed] event, no re-registration).
func (s *Service) Set(c *ctx.Context, sec Section) (*Handle, error) {
	owner := c.Scope()
	if !validName(sec.Name) {
		return nil, fmt.Errorf("system prompt section %q (owner %q): %w: the name must be 1 to 128 characters from [A-Za-z0-9_:./-]", sec.Name, owner.Name(), ErrInvalidSection)
	}
	if sec.Render != nil && sec.Text != "" {
		return nil, fmt.Errorf("system prompt section %q (owner %q): %w: set Text or Render, not both", sec.Name, owner.Name(), ErrInvalidSection)
	}
	e := &entry{
		name:        sec.Name,
		order:       sec.Order,
		owner:       owner,
		layer:       c.Layer(),
		reg:         c,
		render:      sec.Render,
		interpolate: sec.Interpolate,
	}
	if sec.Render == nil {
		b, err := e.newBody(sec.Text)
		if err != nil {
			return nil, err
		}
		e.text.Store(b)
	}
	dispose, err := s.sections.Add(c, sec.Name, e, func() {
		e.removed.Store(true)
		emit(e.reg, Change{Service: s, Kind: Removed, Section: e.name, Owner: e.owner, Layer: e.layer})
	})
	if de := (*ctx.DuplicateError[*entry])(nil); errors.As(err, &de) {
		return nil, fmt.Errorf("system prompt section %q: registered in the layer of %s by %s, and again by %s: %w (to override it for one subtree, register it in a deeper layer)",
			e.name, e.layer, de.Existing.owner, owner, ErrDuplicateSection)
	}
	if err != nil {
		return nil, fmt.Errorf("system prompt section %q (owner %q): %w", sec.Name, owner.Name(), err)
	}

	emit(c, Change{Service: s, Kind: Added, Section: e.name, Owner: owner, Layer: e.layer})
	return &Handle{s: s, e: e, dispose: dispose}, nil
}

// Handle is one registered section, returned by [Service.Set].
//
// A Handle is safe for concurrent use.
type Handle struct {
	s       *Service
	e       *entry
	dispose ctx.Disposer
}

// Name returns the section's name.
func (h *Handle) Name() string { return h.e.name }

// Text returns the current static text ("" for a section with Render).
func (h *Handle) Text() string {
	if b := h.e.text.Load(); b != nil {
		return b.src
	}
	return ""
}

// SetText replaces the section's static text; the next assembly uses it. A real change emits
// one [Changed] event of kind [Updated]; setting the current text again does nothing. It fails
// for a section with Render ([ErrInvalidSection]), for malformed references in an
// interpolated section ([ErrTemplate], the old text stays) and once the section is removed
// ([ErrDisposed]).
func (h *Handle) SetText(text string) error {
	e := h.e
	if e.render != nil {
		return e.sectionError(fmt.Errorf("%w: the section is rendered by a function; SetText needs a static section", ErrInvalidSection))
	}
	if e.removed.Load() {
		return e.sectionError(ErrDisposed)
	}
	b, err := e.newBody(text)
	if err != nil {
		return err
	}
	if old := e.text.Swap(b); old.src == text {
		return nil
	}
	emit(e.reg, Change{Service: h.s, Kind: Updated, Section: e.name, Owner: e.owner, Layer: e.layer})
	return nil
}

// Dispose removes the section. It is idempotent, like the disposer returned by
// [Service.Register].
func (h *Handle) Dispose(cx context.Context) error { return h.dispose(cx) }
