package mcpclient

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/plugins/mcpclient/catalog"
	"github.com/cordisgo/harness/plugins/toolregistry"
)

// maxCatalogItems bounds each prompts/resources listing written to the catalog: the
// catalog is for search and lazy registration, not a mirror of a server's every resource.
const maxCatalogItems = 1000

// catalog keeps one client's entry of the catalog cache current: a snapshot of the lists
// is taken after every successful discovery (connect, reconnect, tools/list_changed) and
// written by one worker of the client's scope, which adds the prompts and resources the
// server offers (again after the server says they changed). A snapshot not written yet when
// the client unloads (a short command) is written then, without them. It is safe for
// concurrent use.
type catalogCache struct {
	store  *catalog.Store
	hash   string
	writer *ctx.Worker

	mu      sync.Mutex
	latest  *catalog.Server // the newest snapshot (nil before the first discovery)
	written bool            // latest has been written
}

// configHash is the catalog identity of cfg: what decides the lists a server answers with
// (how it is started or reached and the tool filters), with every value that may be a
// secret (env and header values, the URL, OAuth client secrets) replaced by its hash.
func configHash(cfg Config) (string, error) {
	hashed := func(m map[string]string) map[string]string {
		out := make(map[string]string, len(m))
		for k, v := range m {
			out[k] = catalog.SecretHash(v)
		}
		return out
	}
	var allowed []string
	if cfg.AllowedTools != nil {
		allowed = slices.Sorted(slices.Values(*cfg.AllowedTools))
	}
	return catalog.Hash(struct {
		Server     string            `json:"server"`
		Transport  string            `json:"transport"`
		Command    string            `json:"command,omitempty"`
		Args       []string          `json:"args,omitempty"`
		Env        map[string]string `json:"env,omitempty"`
		Cwd        string            `json:"cwd,omitempty"`
		InheritEnv InheritEnv        `json:"inheritEnv"`
		URL        string            `json:"url,omitempty"`
		Headers    map[string]string `json:"headers,omitempty"`
		OAuthID    string            `json:"oauthClient,omitempty"`
		OAuthKeys  []string          `json:"oauthSecrets,omitempty"`
		Allowed    []string          `json:"allowed,omitempty"`
		AllowAll   bool              `json:"allowAll"`
		Denied     []string          `json:"denied,omitempty"`
		Protocol   string            `json:"protocol,omitempty"`
		Roots      []string          `json:"roots,omitempty"`
	}{
		Server: cfg.ServerName, Transport: cfg.Transport, Command: cfg.Command, Args: cfg.Args,
		Env: hashed(cfg.Env), Cwd: cfg.Cwd, InheritEnv: cfg.InheritEnv,
		URL: catalog.SecretHash(cfg.URL), Headers: hashed(cfg.Headers),
		OAuthID:   cfg.OAuth.ClientID,
		OAuthKeys: []string{catalog.SecretHash(cfg.OAuth.ClientSecret), catalog.SecretHash(cfg.OAuth.IdPClientSecret)},
		Allowed:   allowed, AllowAll: cfg.AllowedTools == nil,
		Denied: slices.Sorted(slices.Values(cfg.DeniedTools)), Protocol: cfg.ProtocolVersion, Roots: cfg.Roots,
	})
}

// CatalogHash returns the configuration hash under which the catalog cache keeps the lists
// of the server c configures ([catalog.Server.ConfigHash]), for a host that knows those
// lists without starting the server (one it embeds) and seeds the cache with them.
func (c Config) CatalogHash() (string, error) { return configHash(c) }

// attachCatalog connects s to the catalog service when c sees one: the writer that keeps
// s's entry current, and, for a lazy client, the entry cached for s's configuration, if any
// (nil otherwise).
func attachCatalog(c *ctx.Context, s *supervisor) (*catalog.Server, error) {
	store, ok := catalog.Key.Get(c)
	if !ok || store == nil {
		return nil, nil
	}
	hash, err := configHash(s.cfg)
	if err != nil {
		return nil, err
	}
	cat := &catalogCache{store: store, hash: hash}
	// Registered before the runs and the writer, so it runs after them at unload.
	if _, err := c.Defer("mcpclient:catalog", func(context.Context) error {
		s.flushCatalog()
		return nil
	}); err != nil {
		return nil, err
	}
	w, _, err := c.NewWorker("mcpclient:catalog:"+s.cfg.ServerName, s.writeCatalog)
	if err != nil {
		return nil, err
	}
	cat.writer = w
	s.cat = cat
	if lazy, _ := s.cfg.lazyPolicy(store); !lazy {
		return nil, nil // an eager client only writes the cache
	}
	entry, err := store.Load(s.cfg.ServerName, hash)
	if err != nil {
		if !errors.Is(err, catalog.ErrNotCached) {
			s.log.Warn("ignoring an unusable catalog cache file", "err", err)
		}
		return nil, nil
	}
	return entry, nil
}

// storeOrNil returns the catalog's store, nil without a catalog.
func (cat *catalogCache) storeOrNil() *catalog.Store {
	if cat == nil {
		return nil
	}
	return cat.store
}

// listed records the tools/list the client accepted as the newest snapshot, with g's
// identity and instructions (g is nil for a cached entry, which needs no writing).
func (s *supervisor) listed(g *generation, tools []*mcp.Tool) {
	if s.cat == nil || g == nil {
		return
	}
	info := g.conn.Info()
	e := &catalog.Server{
		ConfigHash:      s.cat.hash,
		ProtocolVersion: info.ProtocolVersion,
		Instructions:    info.Instructions,
		Tools:           tools,
	}
	if info.ServerName != "" || info.ServerVersion != "" {
		e.ServerInfo = &mcp.Implementation{Name: info.ServerName, Title: info.ServerTitle, Version: info.ServerVersion, Description: info.ServerDescription}
	}
	s.cat.mu.Lock()
	if prev := s.cat.latest; prev != nil { // keep the other lists until they are listed again
		e.Prompts, e.Resources, e.ResourceTemplates = prev.Prompts, prev.Resources, prev.ResourceTemplates
	}
	s.cat.latest, s.cat.written = e, false
	s.cat.mu.Unlock()
}

// catalogChanged asks the catalog writer to write the live server's lists again.
func (s *supervisor) catalogChanged() {
	if s.cat != nil {
		s.cat.writer.Kick()
	}
}

// writeCatalog is the catalog writer's run: it lists the live server's prompts and
// resources (when it offers them) into the newest snapshot and writes it. A listing that
// fails is left out (the previous one is kept); a write that fails is logged.
func (s *supervisor) writeCatalog(runcx context.Context) error {
	s.cat.mu.Lock()
	base := s.cat.latest
	s.cat.mu.Unlock()
	g := s.live.Load()
	if base == nil || g == nil {
		return nil
	}
	e := *base
	info := g.conn.Info()
	cx, cancel := context.WithTimeout(runcx, s.cfg.ToolCallTimeout())
	defer cancel()
	cx, done := g.bind(cx)
	defer done()
	cs := g.conn.Session()
	if info.Capabilities.Prompts != nil {
		if ps, _, err := listAll(func(cursor string) ([]*mcp.Prompt, string, error) {
			r, err := cs.ListPrompts(cx, &mcp.ListPromptsParams{Cursor: cursor})
			if err != nil {
				return nil, "", err
			}
			return r.Prompts, r.NextCursor, nil
		}, maxCatalogItems); s.catalogListed("prompts/list", err) {
			e.Prompts = ps
		}
	}
	if info.Capabilities.Resources != nil {
		if rs, _, err := listAll(func(cursor string) ([]*mcp.Resource, string, error) {
			r, err := cs.ListResources(cx, &mcp.ListResourcesParams{Cursor: cursor})
			if err != nil {
				return nil, "", err
			}
			return r.Resources, r.NextCursor, nil
		}, maxCatalogItems); s.catalogListed("resources/list", err) {
			e.Resources = rs
		}
		if ts, _, err := listAll(func(cursor string) ([]*mcp.ResourceTemplate, string, error) {
			r, err := cs.ListResourceTemplates(cx, &mcp.ListResourceTemplatesParams{Cursor: cursor})
			if err != nil {
				return nil, "", err
			}
			return r.ResourceTemplates, r.NextCursor, nil
		}, maxCatalogItems); s.catalogListed("resources/templates/list", err) {
			e.ResourceTemplates = ts
		}
	}
	s.cat.mu.Lock()
	if s.cat.latest != base { // a newer discovery: the next run writes that one
		s.cat.mu.Unlock()
		return nil
	}
	s.cat.latest = &e
	s.cat.mu.Unlock()
	s.flushCatalog()
	return nil
}

// flushCatalog writes the newest snapshot unless it was written already.
func (s *supervisor) flushCatalog() {
	s.cat.mu.Lock()
	defer s.cat.mu.Unlock()
	if s.cat.latest == nil || s.cat.written {
		return
	}
	if err := s.cat.store.Save(s.cfg.ServerName, s.cat.latest); err != nil {
		s.log.Warn("writing the catalog cache failed", "err", err)
		return
	}
	s.cat.written = true
}

// catalogListed reports whether a listing for the catalog succeeded, logging one that did
// not.
func (s *supervisor) catalogListed(what string, err error) bool {
	if err != nil {
		s.log.Debug("catalog: listing failed; the cache keeps the previous one", "request", what, "err", s.scrubErr(err))
	}
	return err == nil
}

// cachedTools builds the registry definitions of a cached entry's tools, as a discovery
// of the same list would (the filters applied again, names that collide left out), but
// without resolving each schema first: the registry compiles them, and a list it refuses
// makes startLazy start the server to list its tools afresh.
func (s *supervisor) cachedTools(e *catalog.Server) ([]toolregistry.Tool, error) {
	publics := make(map[string]string, len(e.Tools))
	tools := make([]toolregistry.Tool, 0, len(e.Tools))
	for _, t := range e.Tools {
		if t == nil || t.Name == "" || !s.cfg.Allows(t.Name) {
			continue
		}
		public := PublicToolName(s.cfg.ServerName, t.Name)
		if other, dup := publics[public]; dup {
			return nil, fmt.Errorf("mcp server %q: cached tools %q and %q have the same public name %q", s.cfg.ServerName, other, t.Name, public)
		}
		publics[public] = t.Name
		tools = append(tools, s.toolDef(t, public, false))
	}
	return tools, nil
}
