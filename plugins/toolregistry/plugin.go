package toolregistry

import (
	"context"

	"github.com/cordisgo/harness/ctx"
)

// Key is the tools service. Plugins that register or execute tools inject it:
//
//	ctx.Meta{Name: "mine", Inject: []ctx.Dependency{toolregistry.Key}}
//
// and read it with toolregistry.Key.Use(ctx).
var Key = ctx.NewKey[*Registry]("tools")

// Plugin provides the tools service ([Key]). Its configuration is [Config].
var Plugin = ctx.Define(ctx.Meta{Name: "toolregistry"}, apply)

func apply(c *ctx.Context, cfg Config) error {
	r := newRegistry(c.Logger(), cfg)
	if _, err := c.Defer("toolregistry:close", func(context.Context) error {
		r.close()
		return nil
	}); err != nil {
		return err
	}
	// The configuration changes in place: nothing registered has to be redone.
	if err := ctx.OnConfigUpdate(c, func(o Config) bool {
		r.opts.Store(&o)
		r.lanes.resize(o.HistorySize)
		r.store.setMax(o.AttachmentMaxBytes)
		return true
	}); err != nil {
		return err
	}
	_, err := Key.Provide(c, r)
	return err
}
