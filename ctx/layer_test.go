package ctx_test

import (
	"testing"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/ctx/ctxtest"
)

func TestLayer(t *testing.T) {
	root := ctxtest.New(t)
	layers := make(chan *ctx.Scope, 2)
	leaf := ctx.Define(ctx.Meta{Name: "leaf"}, func(c *ctx.Context, _ struct{}) error {
		layers <- c.Layer()
		return nil
	})
	var agentScope *ctx.Scope
	agent := ctx.Define(ctx.Meta{Name: "agent"}, func(c *ctx.Context, _ struct{}) error {
		agentScope = c.Scope()
		_, err := c.Layered().Plugin(leaf, nil)
		return err
	})
	ctxtest.Mount(t, root, leaf, nil)
	ctxtest.Mount(t, root, agent, nil)
	ctxtest.Settle(t, root)
	got := map[*ctx.Scope]bool{<-layers: true, <-layers: true}
	if !got[root.Scope()] || !got[agentScope] {
		t.Fatalf("layers %v: want the root for a top-level plugin and the agent for its child", got)
	}
}
