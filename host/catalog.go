package host

import (
	"maps"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/plugins/agent"
	"github.com/cordisgo/harness/plugins/console"
	"github.com/cordisgo/harness/plugins/mcpclient"
	"github.com/cordisgo/harness/plugins/mcpmanager"
	"github.com/cordisgo/harness/plugins/mcpprompts"
	"github.com/cordisgo/harness/plugins/mcpresources"
	"github.com/cordisgo/harness/plugins/model/openaicompat"
	"github.com/cordisgo/harness/plugins/ptc"
	"github.com/cordisgo/harness/plugins/remote"
	"github.com/cordisgo/harness/plugins/sysprompt"
	"github.com/cordisgo/harness/plugins/toolregistry"
)

// The catalog names (a row's use key) of the built-in plugins the host treats specially.
const (
	// UseRemote is the remote API: mounted only by a host that hosts (Options.Hosting).
	UseRemote = "remote"
	// UseConsole is the management page's methods: mounted only by a host that hosts.
	UseConsole = "console"
	// UseManager is the MCP server manager.
	UseManager = "mcpmanager"
	// UseClient is the MCP client, one row per server.
	UseClient = "mcpclient"
	// UseAgent is the agent.
	UseAgent = "agent"
	// UsePTC is programmatic tool calling.
	UsePTC = "ptc"
	// UseModel is the model service.
	UseModel = "model"
	// UseResources is the shared resource tools (list_mcp_resources, …) and subscriptions.
	UseResources = "mcpresources"
)

// builtins is the plugin catalog compiled into the harness: profile rows name these
// plugins in their use key. A plugin joins the catalog with one line here (and a binary or
// an embedder adds its own to the map Catalog returns).
var builtins = map[string]ctx.PluginDef{
	"toolregistry": toolregistry.Plugin,
	"sysprompt":    sysprompt.Plugin,
	UseRemote:      remote.Plugin,
	UseClient:      mcpclient.Plugin,
	UseResources:   mcpresources.Plugin,
	"mcpprompts":   mcpprompts.Plugin,
	UseManager:     mcpmanager.Plugin,
	UseConsole:     console.Plugin,
	UsePTC:         ptc.Plugin,
	UseAgent:       agent.Plugin,
	UseModel:       openaicompat.Plugin,
}

// Catalog returns a copy of the built-in plugin catalog, keyed by the name a profile row's
// use key gives. The copy is the caller's to extend.
func Catalog() map[string]ctx.PluginDef { return maps.Clone(builtins) }
