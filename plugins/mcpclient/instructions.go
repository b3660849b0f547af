package mcpclient

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/plugins/mcpresources"
	"github.com/cordisgo/harness/plugins/sysprompt"
)

// A server's instructions as the system-prompt section mcp:<server>.

// instructionsHeading attributes a server's instructions in the system prompt.
const instructionsHeading = "### MCP server: "

// attributedInstructions returns the text of the mcp:<server> prompt section: a heading
// naming the server, then the server's instructions verbatim (trailing white space trimmed),
// capped at max bytes with a marker. Empty or blank instructions give "" (no section text).
func attributedInstructions(server, instructions string, max int) string {
	body := strings.TrimRightFunc(instructions, func(r rune) bool { return r == ' ' || r == '\t' || r == '\n' || r == '\r' })
	if strings.TrimSpace(body) == "" {
		return ""
	}
	text := instructionsHeading + server + "\n\n" + body
	if len(text) <= max {
		return text
	}
	marker := "\n[instructions truncated: " + strconv.Itoa(len(text)) + " bytes, maxInstructionBytes " + strconv.Itoa(max) + "]"
	keep := max - len(marker)
	if keep <= 0 { // a tiny limit: the marker itself does not fit
		keep, marker = max, ""
	}
	for keep > 0 && !utf8.RuneStart(text[keep]) {
		keep--
	}
	return text[:keep] + marker
}

// attachServerContext mounts the two optional parts of the server's context as sub-scopes of
// the client, each loaded only while its service is mounted: the instructions as the
// system-prompt section mcp:<server>, and the resource provider in mcpResources. Both land in
// the client's registration layer and go away with the service or the client.
func attachServerContext(c *ctx.Context, s *supervisor) error {
	name := Owner(s.cfg.ServerName)
	if _, err := c.Inject(name, []ctx.Dependency{sysprompt.Key}, s.bindPrompt); err != nil {
		return err
	}
	_, err := c.Inject(name, []ctx.Dependency{mcpresources.Key}, func(sub *ctx.Context) error {
		_, err := mcpresources.Key.Use(sub).Register(sub, s.cfg.ServerName, resourceProvider{s})
		return err
	})
	return err
}

// bindPrompt registers the instructions section through sub and keeps it current: the text
// is the last successfully published one ("" before the first successful discovery, which
// renders as nothing), replaced in place when a reconnect brings different instructions.
func (s *supervisor) bindPrompt(sub *ctx.Context) error {
	sp := sysprompt.Key.Use(sub)
	h, err := sp.Set(sub, sysprompt.Section{
		Name:  Owner(s.cfg.ServerName),
		Order: sysprompt.OrderMCPServers,
		// Server text is literal: braces in it never fail the prompt.
		Interpolate: false,
	})
	if err != nil {
		return err
	}
	// mu orders the initial text against updates from the supervisor, so the section
	// always ends with the newest text.
	var mu sync.Mutex
	set := func(text string) {
		mu.Lock()
		defer mu.Unlock()
		if err := h.SetText(text); err != nil && sub.Err() == nil {
			s.log.Warn("updating the instructions section failed", "err", err)
		}
	}
	_, stop := s.watchInstructions(set)
	if _, err := sub.Defer("mcpclient:instructions", func(context.Context) error { stop(); return nil }); err != nil {
		return err // Defer ran stop already
	}
	mu.Lock()
	defer mu.Unlock()
	return h.SetText(s.instructions())
}
