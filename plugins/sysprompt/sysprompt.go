package sysprompt

import (
	"errors"
	"fmt"

	"github.com/cordisgo/harness/ctx"
)

// Key is the systemPrompt service. Inject it to use the prompt, or read it with Key.Get when
// the prompt is optional for the plugin.
var Key = ctx.NewKey[*Service]("systemPrompt")

// Plugin provides the systemPrompt service. Its configuration is [Config]. A change of the
// preamble alone is applied in place (one change event, dependents keep running); any other
// configuration change restarts the plugin.
var Plugin = ctx.Define(ctx.Meta{Name: "sysprompt"}, apply)

// Changed is emitted after every change to a [Service]'s sections: a registration, a removal
// (disposer or scope unload) and a text replaced through a [Handle]. It is dispatched from the
// registering context, after the change is visible to Assemble.
var Changed = ctx.NewEvent[Change]("systemPrompt/changed")

// Order bands used by the harness. Any int is a valid order; these keep well-known sections at
// stable positions (the values follow deepseek-harness).
const (
	// OrderPreamble is the order of the configured preamble (the harness identity band).
	OrderPreamble = -1000
	// OrderMCPServers is the order of MCP server instructions and the MCP resource server list.
	OrderMCPServers = 3100
)

// PreambleSection is the name of the section holding [Config].Preamble.
const PreambleSection = "sysprompt:preamble"

// Sentinel errors, matched with [errors.Is].
var (
	// ErrInvalidSection reports a section that cannot be registered: a bad name, or both Text
	// and Render set.
	ErrInvalidSection = errors.New("invalid section")
	// ErrDuplicateSection reports a second registration of a name in one layer.
	ErrDuplicateSection = errors.New("section already registered in this layer")
	// ErrTemplate reports a malformed {{…}} reference in an interpolated section.
	ErrTemplate = errors.New("invalid template")
	// ErrMissingVariable reports a {{name}} reference to a variable absent from Assembly.Vars.
	ErrMissingVariable = errors.New("missing variable")
	// ErrDisposed is returned by [Handle.SetText] once the section has been removed.
	ErrDisposed = errors.New("section removed")
)

// Service holds the registered sections and assembles prompts.
//
// A Service is safe for concurrent use. No lock is held while Render functions or event
// listeners run, so they may call back into the service.
type Service struct {
	sep string

	sections *ctx.Layers[*entry]   // the registered sections, by layer
	views    ctx.LayerCache[*view] // merged views, by the nearest layer of the assembling scope
}

// New returns an empty service. It is what [Plugin] provides; use it directly to assemble
// prompts outside a plugin tree (tests, tools). An empty Separator means a blank line; the
// preamble options are ignored (register a section instead).
func New(opts Config) *Service {
	sep := opts.Separator
	if sep == "" {
		sep = "\n\n"
	}
	return &Service{sep: sep, sections: ctx.NewLayers[*entry]("systemPrompt")}
}

// Separator returns the string that joins sections.
func (s *Service) Separator() string { return s.sep }

func apply(c *ctx.Context, o Config) error {
	s := New(o)
	pre, err := s.Set(c, Section{Name: PreambleSection, Order: OrderPreamble, Text: o.Preamble, Interpolate: o.Interpolate})
	if err != nil {
		return err
	}
	err = ctx.OnConfigUpdate(c, func(n Config) bool {
		if n.Separator != o.Separator || n.Interpolate != o.Interpolate {
			return false
		}
		return pre.SetText(n.Preamble) == nil
	})
	if err != nil {
		return err
	}
	_, err = Key.Provide(c, s)
	return err
}

// ChangeKind says what a [Change] did. It is a plain value.
type ChangeKind uint8

// Change kinds.
const (
	// Added: a section was registered.
	Added ChangeKind = iota + 1
	// Removed: a section was disposed, directly or by its scope's unload.
	Removed
	// Updated: a section's text was replaced through [Handle.SetText].
	Updated
)

// String returns "added", "removed" or "updated".
func (k ChangeKind) String() string {
	switch k {
	case Added:
		return "added"
	case Removed:
		return "removed"
	case Updated:
		return "updated"
	}
	return fmt.Sprintf("ChangeKind(%d)", uint8(k))
}

// Change is the argument of [Changed].
//
// A Change is an immutable value.
type Change struct {
	// Service is the service whose sections changed.
	Service *Service
	// Kind says what happened.
	Kind ChangeKind
	// Section is the section's name.
	Section string
	// Owner is the registering scope; Owner.Name() is the attribution used in prompts.
	Owner *ctx.Scope
	// Layer is the scope whose layer holds the section.
	Layer *ctx.Scope
}

// emit dispatches ch from c; a failing listener is logged, never returned.
func emit(c *ctx.Context, ch Change) {
	if err := Changed.Emit(c, ch); err != nil {
		c.Logger().Warn("systemPrompt change listener failed", "section", ch.Section, "change", ch.Kind.String(), "err", err)
	}
}
