package regtest

import (
	"context"
	"encoding/json"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/plugins/toolregistry"
)

// Outcome is what a call of [toolregistry.Registry.Execute] returned.
type Outcome struct {
	Res *toolregistry.Result
	Err error
}

// Start calls reg.Execute(cx, c, name, args, opts) on a goroutine of its own, for a test
// that acts while the call runs (cancels it, unloads its caller), and returns the channel
// its outcome arrives on; the channel is buffered, so the goroutine ends with the call even
// when nobody receives.
func Start(cx context.Context, reg *toolregistry.Registry, c *ctx.Context, name string, args json.RawMessage, opts toolregistry.ExecOptions) <-chan Outcome {
	done := make(chan Outcome, 1)
	go func() {
		res, err := reg.Execute(cx, c, name, args, opts)
		done <- Outcome{res, err}
	}()
	return done
}
