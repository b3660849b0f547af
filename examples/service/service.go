package service

import "github.com/cordisgo/harness/ctx"

// Key names the clock service.
var Key = ctx.NewKey[*Clock]("clock")

func apply(c *ctx.Context, cfg Config) error {
	_, err := Key.Provide(c, &Clock{layout: cfg.Layout})
	return err
}
