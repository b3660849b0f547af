package mcpclient

import (
	"context"
	"fmt"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/plugins/toolregistry"
)

// Plugin connects one MCP server; mount one instance per server, in the scope whose agents may
// use it. Its configuration is [Config]. It injects the tools service ([toolregistry.Key]).
//
// Activation reserves serverName in the registration scope, starts the supervisor and waits
// for the first connection and tool discovery (bounded by startupTimeoutMs). If that fails,
// activation fails with failOnStartupError and otherwise succeeds with no tools while the
// supervisor keeps retrying in the background. Unloading the scope closes the connection
// (a stdio server's whole process group) and removes the tools, the prompt section and the
// resource provider.
var Plugin = ctx.Define(ctx.Meta{Name: "mcpclient", Inject: []ctx.Dependency{toolregistry.Key}}, apply)

func apply(c *ctx.Context, cfg Config) error {
	cfg, err := expandAtMount(c, cfg)
	if err != nil {
		return err
	}
	if err := reserve(c, cfg.ServerName); err != nil {
		return err
	}
	set, err := toolregistry.Key.Use(c).NewSet(c, Owner(cfg.ServerName))
	if err != nil {
		return fmt.Errorf("mcp server %q: %w", cfg.ServerName, err)
	}
	s := newSupervisor(c, cfg, set)
	if len(cfg.Roots) > 0 {
		uris := s.rootURIs(cfg.Roots)
		s.roots.Store(&uris)
		if err := ctx.OnConfigUpdate(c, s.updateRoots); err != nil {
			return fmt.Errorf("mcp server %q: %w", cfg.ServerName, err)
		}
	}
	if err := s.followOffers(c); err != nil {
		return fmt.Errorf("mcp server %q: %w", cfg.ServerName, err)
	}
	if err := publishUpstream(c, s); err != nil {
		return fmt.Errorf("mcp server %q: %w", cfg.ServerName, err)
	}
	if err := attachServerContext(c, s); err != nil {
		return fmt.Errorf("mcp server %q: %w", cfg.ServerName, err)
	}
	entry, err := attachCatalog(c, s)
	if err != nil {
		return fmt.Errorf("mcp server %q: %w", cfg.ServerName, err)
	}
	if lazy, idle := cfg.lazyPolicy(s.cat.storeOrNil()); lazy {
		if err := s.becomeLazy(c, idle); err != nil {
			return fmt.Errorf("mcp server %q: %w", cfg.ServerName, err)
		}
		if s.startLazy(entry) {
			return nil // not started: the first call starts it
		}
	} else if _, err := c.Go("mcpclient:"+cfg.ServerName, s.run); err != nil {
		return fmt.Errorf("mcp server %q: %w", cfg.ServerName, err)
	}
	select {
	case <-s.ready:
	case <-c.Done():
		// Disposed while connecting: the supervisor's context ended with ours, so the
		// attempt is aborted; the unload waits for it.
		return context.Cause(c)
	}
	if s.startErr != nil && cfg.FailOnStartupError {
		return fmt.Errorf("mcp server %q: initial connection or tool discovery failed: %w", cfg.ServerName, s.startErr)
	}
	return nil
}
