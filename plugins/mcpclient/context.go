package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/plugins/mcpresources"
	"github.com/cordisgo/harness/plugins/sysprompt"
)

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
	name := "mcp:" + s.cfg.ServerName
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
		Name:  "mcp:" + s.cfg.ServerName,
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

// resourceProvider serves the server's resources to mcpResources over the live generation.
// It is safe for concurrent use.
type resourceProvider struct{ s *supervisor }

// Request implements mcpresources.Provider: resources/list, resources/templates/list and
// resources/read with the caller's cursor or URI unchanged, bounded by toolCallTimeoutMs,
// answered with the protocol result as JSON. A server without the resources capability
// lists nothing and refuses reads.
func (p resourceProvider) Request(cx context.Context, req mcpresources.Request, _ mcpresources.CallerInfo) (json.RawMessage, error) {
	s := p.s
	release, err := s.acquire(cx)
	if err != nil {
		return nil, err
	}
	defer release()
	g := s.live.Load()
	if g == nil {
		return nil, s.unavailable()
	}
	pcx := cx
	timeout, key := s.cfg.ToolCallTimeout(), "toolCallTimeoutMs"
	if req.Method == mcpresources.MethodRead {
		timeout, key = s.cfg.MaxToolCall(), "maxToolCallMs" // reads time out idle (readResource)
	}
	cx, cancel := context.WithTimeout(cx, timeout)
	defer cancel()
	cx, done := g.bind(cx)
	defer done()
	cs := g.conn.Session()
	hasResources := g.conn.Info().Capabilities.Resources != nil
	var res any
	switch req.Method {
	case mcpresources.MethodList:
		if !hasResources {
			return json.RawMessage(`{"resources":[]}`), nil
		}
		res, err = cs.ListResources(cx, &mcp.ListResourcesParams{Cursor: req.Cursor})
	case mcpresources.MethodTemplates:
		if !hasResources {
			return json.RawMessage(`{"resourceTemplates":[]}`), nil
		}
		res, err = cs.ListResourceTemplates(cx, &mcp.ListResourceTemplatesParams{Cursor: req.Cursor})
	case mcpresources.MethodRead:
		if !hasResources {
			return nil, fmt.Errorf("mcp server %q does not offer resources", s.cfg.ServerName)
		}
		res, err = s.readResource(cx, g, &mcp.ReadResourceParams{URI: req.URI})
		if asIdle(err) != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("mcp server %q: unsupported resource method %q", s.cfg.ServerName, req.Method)
	}
	if err != nil {
		if pcx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
			return nil, fmt.Errorf("mcp server %q: %s timed out after %v (%s)", s.cfg.ServerName, req.Method, timeout, key)
		}
		return nil, s.callError(pcx, g, req.Method, err)
	}
	return json.Marshal(res)
}
