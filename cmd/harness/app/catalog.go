package app

import (
	"maps"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/plugins/agent"
	"github.com/cordisgo/harness/plugins/console"
	"github.com/cordisgo/harness/plugins/mcpclient"
	"github.com/cordisgo/harness/plugins/mcpmanager"
	"github.com/cordisgo/harness/plugins/mcpprompts"
	"github.com/cordisgo/harness/plugins/mcpresources"
	"github.com/cordisgo/harness/plugins/model"
	"github.com/cordisgo/harness/plugins/ptc"
	"github.com/cordisgo/harness/plugins/remote"
	"github.com/cordisgo/harness/plugins/sysprompt"
	"github.com/cordisgo/harness/plugins/toolregistry"
)

// builtins is the plugin catalog compiled into the harness: profile rows
// name these plugins in their use key. A plugin joins the binary with one
// line here (and custom binaries add theirs with Options.Plugins).
var builtins = map[string]ctx.PluginDef{
	"toolregistry": toolregistry.Plugin,
	"sysprompt":    sysprompt.Plugin,
	"remote":       remote.Plugin,
	"mcpclient":    mcpclient.Plugin,
	"mcpresources": mcpresources.Plugin,
	"mcpprompts":   mcpprompts.Plugin,
	"mcpmanager":   mcpmanager.Plugin,
	"console":      console.Plugin,
	"ptc":          ptc.Plugin,
	"agent":        agent.Plugin,
	"model":        model.Plugin,
}

// Catalog returns a copy of the built-in plugin catalog, keyed by the name
// a profile row's use key gives.
func Catalog() map[string]ctx.PluginDef { return maps.Clone(builtins) }
