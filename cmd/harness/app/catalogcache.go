package app

import (
	"time"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/plugins/mcpcatalog"
	"github.com/cordisgo/harness/plugins/mcpclient"
	"github.com/cordisgo/harness/plugins/toolsearch"
	"github.com/cordisgo/harness/profiles"
)

// provideCatalog provides the MCP catalog cache in root, in the user's cache directory
// (catalogDir), before the profile's rows mount: every client keeps its server's lists
// there, and lazy servers register their cached tools from it. Without a cache directory
// the clients go without (lazy servers then start once at mount). The profile's fleet key
// is the servers' default startup and idle timeout.
func (a *invocation) provideCatalog(root *ctx.Context, p *profiles.Profile) {
	dir, err := a.catalogDir()
	if err == nil {
		var store *mcpcatalog.Store
		if store, err = mcpcatalog.Open(mcpcatalog.Options{Dir: dir, Logger: a.logger, Startup: p.Fleet.Startup,
			IdleTimeout: time.Duration(p.Fleet.IdleTimeoutMs) * time.Millisecond}); err == nil {
			_, err = mcpcatalog.Key.Provide(root, store)
		}
	}
	if err != nil {
		a.logger.Debug("no MCP catalog cache", "err", err)
	}
}

// provideInstructions provides in root the MCP servers' instructions that agents' tool
// search ranks (toolsearch.InstructionsKey), from the MCP clients visible where the search
// runs.
func provideInstructions(root *ctx.Context) error {
	_, err := toolsearch.InstructionsKey.Provide(root, toolsearch.InstructionsFunc(mcpclient.InstructionsOf))
	return err
}
