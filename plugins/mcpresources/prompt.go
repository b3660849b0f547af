package mcpresources

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/plugins/sysprompt"
)

// SectionName is the name of the prompt section listing the resource servers. It sorts
// before every "mcp:<server>" instruction section of the MCP client ('-' < ':'), so at the
// shared order [sysprompt.OrderMCPServers] the list of resource servers comes first and the
// servers' own instructions follow it.
const SectionName = "mcp-resource-servers"

// SectionOrder is the order of the section: the MCP servers band.
const SectionOrder = sysprompt.OrderMCPServers

// bindPrompt is the apply function of the "mcpresources-prompt" sub-scope, which loads while
// a systemPrompt service is available: it adds a section to every layer that has providers,
// and to every layer that gets its first provider later, until the sub-scope unloads.
func (s *Service) bindPrompt(c *ctx.Context) error {
	sp := sysprompt.Key.Use(c)
	if _, err := c.Defer("mcpresources:prompt", func(context.Context) error {
		s.unbindPrompt(sp)
		return nil
	}); err != nil {
		return err
	}
	s.op.Lock()
	defer s.op.Unlock()
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.prompt = sp
	s.mu.Unlock()
	for _, l := range s.layers {
		s.addSectionLocked(l)
	}
	return nil
}

// unbindPrompt removes the sections registered in sp.
func (s *Service) unbindPrompt(sp *sysprompt.Service) {
	s.op.Lock()
	defer s.op.Unlock()
	s.mu.Lock()
	if s.prompt != sp {
		s.mu.Unlock()
		return
	}
	s.prompt = nil
	s.mu.Unlock()
	for _, l := range s.layers {
		if l.section != nil {
			if err := l.section(context.Background()); err != nil {
				s.logger.Warn("removing the MCP resource prompt section failed", "layer", l.scope.Name(), "err", err)
			}
			l.section = nil
		}
	}
}

// addSectionLocked registers l's prompt section if a prompt service is bound and l has
// none yet. The section goes into l's layer, as an effect of the layer scope's activation,
// so it is seen by exactly the assemblies that can see l's providers. A failure costs the
// prompt text only, never the tools: it is logged. The caller holds op.
func (s *Service) addSectionLocked(l *layer) {
	s.mu.RLock()
	sp := s.prompt
	s.mu.RUnlock()
	live := s.layers[l.scope] == l
	if sp == nil || !live || l.section != nil {
		return
	}
	lc := layerContext(l)
	if lc == nil {
		return
	}
	d, err := sp.Register(lc, sysprompt.Section{
		Name:   SectionName,
		Order:  SectionOrder,
		Render: s.renderSection,
	})
	if err != nil {
		s.logger.Warn("adding the MCP resource prompt section failed", "layer", l.scope.Name(), "err", err)
		return
	}
	l.section = d
}

// renderSection renders the section for the assembling scope: empty (so dropped) when it
// sees no resource server.
func (s *Service) renderSection(a *sysprompt.Assembly) (string, error) {
	if a == nil || a.Caller == nil {
		return "", nil
	}
	return promptText(s.Servers(a.Caller)), nil
}

// promptText is the text of the prompt section for the given visible servers (sorted by the
// caller), or "" when there are none. The section renders it at every assembly with the
// servers visible from the assembling scope.
func promptText(servers []string) string {
	if len(servers) == 0 {
		return ""
	}
	names, _ := json.Marshal(servers) // server names are plain ASCII: never fails, never escapes
	var b strings.Builder
	b.WriteString("## MCP resource servers\n\n")
	b.WriteString("These MCP servers offer resources (documents, files, data) that you can read on demand. ")
	b.WriteString("Use one of these names as the server argument: ")
	b.Write(names)
	b.WriteString(".\n\n")
	b.WriteString("- " + ToolList + ": list a server's resources with their URIs. When a result has nextCursor, call again with that value as cursor to get the next page.\n")
	b.WriteString("- " + ToolTemplates + ": list a server's URI templates (such as file:///{path}); fill in the placeholders to build a URI.\n")
	b.WriteString("- " + ToolRead + ": read one resource by URI. Binary contents are described by size and type, not shown.")
	return b.String()
}
