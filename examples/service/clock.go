// Package service holds the services example of docs/plugins.md: a plugin that provides a
// typed service.
package service

import (
	"time"

	"github.com/cordisgo/harness/ctx"
)

// Config is the plugin's configuration.
type Config struct {
	// Layout is the time layout of the clock.
	Layout string `json:"layout"`
}

// Clock is the service the plugin provides. It is safe for concurrent use (immutable).
type Clock struct{ layout string }

// Format formats t in the clock's layout.
func (c *Clock) Format(t time.Time) string { return t.Format(c.layout) }

// Plugin provides the clock service.
var Plugin = ctx.Define(ctx.Meta{Name: "clock"}, apply)
