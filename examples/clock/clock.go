package clock

import (
	"context"
	"time"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/plugins/sysprompt"
	"github.com/cordisgo/harness/plugins/toolregistry"
)

// Config is the plugin's configuration: camelCase keys, decoded strictly.
type Config struct {
	// Layout is the time format of the now tool (default RFC 3339).
	Layout string `json:"layout"`
}

// Default sets the defaults before a row's config is decoded over them.
func (c *Config) Default() { c.Layout = time.RFC3339 }

// Plugin registers the now tool and tells the model about it.
var Plugin = ctx.Define(ctx.Meta{
	Name:   "clock",
	Inject: []ctx.Dependency{toolregistry.Key}, // wait for the tool registry
}, apply)

func apply(c *ctx.Context, cfg Config) error {
	tools := toolregistry.Key.Use(c)
	_, err := tools.Register(c, toolregistry.Tool{
		Name:        "now",
		Description: "Returns the current time.",
		Parameters:  []byte(`{"type":"object","properties":{}}`),
		Execute: func(context.Context, *toolregistry.Call) (*toolregistry.Result, error) {
			return toolregistry.TextResult(time.Now().Format(cfg.Layout)), nil
		},
	})
	if err != nil {
		return err
	}
	// The prompt is optional: follow it while it exists.
	_, err = c.Inject("clock-prompt", []ctx.Dependency{sysprompt.Key}, func(c *ctx.Context) error {
		_, err := sysprompt.Key.Use(c).Register(c, sysprompt.Section{
			Name:  "clock",
			Order: 500,
			Text:  "Use the now tool when the user asks for the time.",
		})
		return err
	})
	return err
}
