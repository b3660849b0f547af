// Package layers holds the layered-registrations example of docs/plugins.md: a service
// whose named values are seen by the registering layer's subtree, nearest first.
package layers

import (
	"errors"
	"fmt"

	"github.com/cordisgo/harness/ctx"
)

// Service keeps snippets by layer. It is safe for concurrent use (ctx.Layers is).
type Service struct{ snippets *ctx.Layers[string] }

// New returns an empty service.
func New() *Service { return &Service{snippets: ctx.NewLayers[string]("snippet")} }

// Register adds a snippet to the caller's layer until the caller's scope unloads.
func (s *Service) Register(c *ctx.Context, name, text string) (ctx.Disposer, error) {
	d, err := s.snippets.Add(c, name, text, func() { /* announce the removal */ })
	if de := (*ctx.DuplicateError[string])(nil); errors.As(err, &de) {
		return nil, fmt.Errorf("snippet %q is already registered in layer %q", name, de.Layer.Name())
	}
	return d, err
}

// Lookup finds the nearest snippet called name that c's scope sees.
func (s *Service) Lookup(c *ctx.Context, name string) (string, bool) {
	e, ok := s.snippets.Get(c.Scope(), name)
	return e.Value, ok
}
