package config

import (
	"sync/atomic"

	"github.com/cordisgo/harness/ctx"
)

// layout is the layout of the current configuration.
var layout atomic.Value

// Plugin takes configuration updates in place.
var Plugin = ctx.Define(ctx.Meta{Name: "clock"}, func(c *ctx.Context, cfg Config) error {
	layout.Store(cfg.Layout)
	return ctx.OnConfigUpdate(c, func(next Config) bool {
		layout.Store(next.Layout)
		return true // accepted in place; false restarts the scope with the new config
	})
})
