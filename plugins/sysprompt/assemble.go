package sysprompt

import (
	"bytes"
	"cmp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/cordisgo/harness/ctx"
)

// Assembly is what a Render function receives: who is assembling and with which variables.
//
// An Assembly is shared by the sections of one Assemble call and valid only during it. Render
// functions must not modify Vars.
type Assembly struct {
	// Caller is the context Assemble was called with: the agent (or any scope) the prompt is
	// for. Render functions that depend on the caller's position in the tree read it here.
	Caller *ctx.Context
	// Vars are the variables passed to Assemble (possibly nil).
	Vars map[string]string
}

// Prompt is an assembled system prompt with the record of who wrote what.
//
// A Prompt is not shared by the service: the caller owns it.
type Prompt struct {
	// Text is the system prompt.
	Text string
	// Sections lists the sections that produced text, in prompt order. Dropped (empty)
	// sections are not listed.
	Sections []Rendered
}

// Rendered records one section of a [Prompt].
//
// A Rendered is a plain value.
type Rendered struct {
	// Name is the section's name.
	Name string
	// Owner is the name of the scope that registered the section.
	Owner string
	// Order is the section's order.
	Order int
	// Start and End are the byte offsets of the section's text in Prompt.Text, separators
	// excluded: Prompt.Text[Start:End] == Text.
	Start, End int
	// Text is the section's rendered text.
	Text string
}

// view is the merged, sorted list of sections visible below one layer. Immutable but for
// hint.
type view struct {
	entries []*entry
	dynamic bool         // some entry has a Render function
	hint    atomic.Int64 // length of the last prompt assembled from this view
}

var scratchPool = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

// maxPooled bounds the scratch buffers kept for reuse.
const maxPooled = 1 << 20

// Assemble renders the system prompt as seen from c: the sections of the layers of c's scope
// and its ancestors (nearest wins by name), by ascending order then name, joined with the
// separator, with empty sections dropped. vars feeds interpolated sections and Render
// functions.
//
// It fails with a [*SectionError] naming the section and its owner when a Render function
// fails or panics, or an interpolated section refers to a variable missing from vars
// ([ErrMissingVariable]) or renders a malformed reference ([ErrTemplate]).
func (s *Service) Assemble(c *ctx.Context, vars map[string]string) (*Prompt, error) {
	v := s.view(c.Scope())
	var a *Assembly
	if v.dynamic {
		a = &Assembly{Caller: c, Vars: vars}
	}
	var sb strings.Builder
	sb.Grow(int(v.hint.Load()))
	var scratch *[]byte // for sections that are not plain static text
	defer func() {
		if scratch != nil && cap(*scratch) <= maxPooled {
			scratchPool.Put(scratch)
		}
	}()
	expandSegs := func(segs []segment) ([]byte, error) {
		if scratch == nil {
			scratch = scratchPool.Get().(*[]byte)
		}
		out, err := expand((*scratch)[:0], segs, vars)
		*scratch = out[:0]
		return out, err
	}
	secs := make([]Rendered, 0, len(v.entries))
	for _, e := range v.entries {
		var (
			str      string // the section's text, unless
			expanded bool   // it was expanded into out (scratch)
			out      []byte
			err      error
		)
		switch b := e.text.Load(); {
		case b != nil && b.segs == nil:
			if b.blank {
				continue
			}
			str = b.out
		case b != nil:
			out, err = expandSegs(b.segs)
			expanded = true
		default:
			str, err = e.callRender(a)
			if err == nil && e.interpolate {
				var segs []segment
				if segs, err = e.segsFor(str); err == nil {
					out, err = expandSegs(segs)
					expanded = true
				}
			}
		}
		if err != nil {
			return nil, e.sectionError(err)
		}
		if expanded && len(bytes.TrimSpace(out)) == 0 || !expanded && strings.TrimSpace(str) == "" {
			continue
		}
		if len(secs) > 0 {
			sb.WriteString(s.sep)
		}
		start := sb.Len()
		if expanded {
			sb.Write(out)
		} else {
			sb.WriteString(str)
		}
		secs = append(secs, Rendered{Name: e.name, Owner: e.owner.Name(), Order: e.order, Start: start, End: sb.Len()})
	}
	text := sb.String()
	v.hint.Store(int64(len(text)))
	for i := range secs {
		secs[i].Text = text[secs[i].Start:secs[i].End]
	}
	return &Prompt{Text: text, Sections: secs}, nil
}

// segsFor parses the output of an interpolated Render function, reusing the last parse when
// the output did not change.
func (e *entry) segsFor(out string) ([]segment, error) {
	if p := e.parsed.Load(); p != nil && p.src == out {
		return p.segs, nil
	}
	segs, err := parseTemplate(out)
	if err != nil {
		return nil, err
	}
	e.parsed.Store(&parsed{src: out, segs: segs})
	return segs, nil
}

// callRender runs the Render function, turning a panic into a *ctx.PanicError.
func (e *entry) callRender(a *Assembly) (out string, err error) {
	err = ctx.Safely(func() (err error) {
		out, err = e.render(a)
		return err
	})
	return out, err
}

// view returns the cached view for sc, building it after a change. Every scope below the
// nearest layer holding sections sees the same ones: the view is cached under that layer.
func (s *Service) view(sc *ctx.Scope) *view {
	version := s.sections.Version()
	key := s.sections.Nearest(sc)
	return s.views.Get(key, version, func() *view { return s.build(key) })
}

func (s *Service) build(key *ctx.Scope) *view {
	visible := s.sections.Visible(key)
	v := &view{entries: make([]*entry, 0, len(visible))}
	hint := 0
	for _, le := range visible {
		e := le.Value
		v.entries = append(v.entries, e)
		v.dynamic = v.dynamic || e.render != nil
		if b := e.text.Load(); b != nil {
			hint += len(b.src) + len(s.sep)
		}
	}
	v.hint.Store(int64(hint))
	slices.SortFunc(v.entries, func(a, b *entry) int {
		if c := cmp.Compare(a.order, b.order); c != 0 {
			return c
		}
		return strings.Compare(a.name, b.name)
	})
	return v
}
