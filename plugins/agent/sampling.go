package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/permission"
	"github.com/cordisgo/harness/plugins/agent/session"
	"github.com/cordisgo/harness/plugins/model"
	"github.com/cordisgo/harness/plugins/sysprompt"
	"github.com/cordisgo/harness/sampling"
)

type mcpResult = mcp.CreateMessageResult //nolint:staticcheck // SEP-2577: sampling stays for peers on protocol versions that have it (2025-11-25)

// registerPrompt adds the agent's prompt section in its layer, from a sub-scope that follows
// the system prompt service (it may load after the agent, or restart).
func (d *agentDef) registerPrompt() error {
	_, err := d.c.Inject("agent:prompt", []ctx.Dependency{sysprompt.Key}, func(c *ctx.Context) error {
		_, err := sysprompt.Key.Use(c).Register(c, sysprompt.Section{Name: "agent:prompt", Order: 0, Text: d.cfg.Prompt})
		return err
	})
	return err
}

// sample is the agent's layer sampler: a server's request caused by one of this agent's
// sessions goes to that session (its person approves); any other request is answered
// only when the agent's sampling is "allow".
func (d *agentDef) sample(cx context.Context, r *sampling.Request) (*mcpResult, error) {
	if r.Call != nil {
		if s, ok := FromContext(r.Call); ok {
			return s.sample(cx, r)
		}
	}
	if d.cfg.Sampling != permission.Allow {
		return nil, fmt.Errorf("sampling refused: the request is not part of an agent session, so nobody can approve it (set the agent's sampling to \"allow\" to answer such requests)")
	}
	m, err := d.models.Get(d.cfg.Model)
	if err != nil {
		return nil, err
	}
	return generateSample(cx, m, r)
}

// sample answers a sampling request caused by one of s's tool calls, with s's model,
// after the person driving the session approves it.
func (s *Session) sample(cx context.Context, r *sampling.Request) (*mcpResult, error) {
	d, err := s.def()
	if err != nil {
		return nil, err
	}
	switch d.cfg.Sampling {
	case permission.Deny:
		return nil, errors.New("sampling refused by the agent's configuration")
	case permission.Ask:
		ok, why, err := s.ask(cx, permission.Request{Kind: "sampling", Server: r.Server, Reason: samplingSummary(r.Params), Sampling: samplingAsked(r.Params)})
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, fmt.Errorf("sampling refused: %s", why)
		}
	}
	m, err := d.models.Get(s.modelName)
	if err != nil {
		return nil, err
	}
	return generateSample(cx, m, r)
}

// samplingSummary describes a request for the person: its size and the start of its last
// message.
func samplingSummary(p *mcp.CreateMessageParams) string { //nolint:staticcheck // SEP-2577: sampling stays for peers on protocol versions that have it (2025-11-25)
	if p == nil || len(p.Messages) == 0 {
		return "a completion"
	}
	last := ""
	if t, ok := p.Messages[len(p.Messages)-1].Content.(*mcp.TextContent); ok {
		last = session.Title(t.Text)
	}
	return fmt.Sprintf("a completion of %d message(s), up to %d tokens: %q", len(p.Messages), p.MaxTokens, last)
}

// maxSampledText bounds the text of one message a sampling question shows (and logs).
const maxSampledText = 4000

// samplingAsked is what the person is shown of a sampling request: its messages' text (an
// image or audio described, a long text cut), the system prompt, the token limit and the
// server's model preferences.
func samplingAsked(p *mcp.CreateMessageParams) *permission.Sampling { //nolint:staticcheck // SEP-2577: sampling stays for peers on protocol versions that have it (2025-11-25)
	if p == nil {
		return nil
	}
	cut := func(s string) string {
		if len(s) <= maxSampledText {
			return s
		}
		return cutRunes(s, maxSampledText, true) + fmt.Sprintf(" [… %d more bytes]", len(s)-len(cutRunes(s, maxSampledText, true)))
	}
	out := &permission.Sampling{SystemPrompt: cut(p.SystemPrompt), MaxTokens: p.MaxTokens, Temperature: p.Temperature,
		Messages: make([]permission.SamplingMessage, 0, len(p.Messages))}
	for _, m := range p.Messages {
		if m == nil {
			continue
		}
		var text string
		switch c := m.Content.(type) {
		case *mcp.TextContent:
			text = cut(c.Text)
		case *mcp.ImageContent:
			text = fmt.Sprintf("[image: %s, %d bytes]", c.MIMEType, len(c.Data))
		case *mcp.AudioContent:
			text = fmt.Sprintf("[audio: %s, %d bytes]", c.MIMEType, len(c.Data))
		default:
			text = "[content not supported]"
		}
		out.Messages = append(out.Messages, permission.SamplingMessage{Role: string(m.Role), Text: text})
	}
	if mp := p.ModelPreferences; mp != nil {
		for _, h := range mp.Hints {
			if h != nil && h.Name != "" {
				out.ModelHints = append(out.ModelHints, h.Name)
			}
		}
		out.CostPriority, out.SpeedPriority, out.IntelligencePriority = mp.CostPriority, mp.SpeedPriority, mp.IntelligencePriority
	}
	return out
}

// generateSample runs a sampling request on m.
func generateSample(cx context.Context, m model.Model, r *sampling.Request) (*mcpResult, error) {
	p := r.Params
	if p == nil {
		return nil, errors.New("sampling: no parameters")
	}
	info := m.Info()
	req := &model.Request{System: p.SystemPrompt, MaxTokens: int(p.MaxTokens)}
	for _, sm := range p.Messages {
		if sm == nil {
			continue
		}
		msg := model.Message{Role: model.RoleUser}
		if sm.Role == "assistant" {
			msg.Role = model.RoleAssistant
		}
		switch c := sm.Content.(type) {
		case *mcp.TextContent:
			msg.Content = c.Text
		case *mcp.ImageContent:
			if info.ImageInput && msg.Role == model.RoleUser {
				msg.Images = []model.Image{{MIMEType: c.MIMEType, Data: c.Data}}
			} else {
				msg.Content = fmt.Sprintf("[image: %s, %d bytes] (not shown: the model %s does not accept image input)", c.MIMEType, len(c.Data), info.ID)
			}
		case *mcp.AudioContent:
			msg.Content = fmt.Sprintf("[audio: %s, %d bytes] (not shown: audio is not supported)", c.MIMEType, len(c.Data))
		default:
			msg.Content = "[content not supported]"
		}
		req.Messages = append(req.Messages, msg)
	}
	resp, err := m.Generate(cx, req, nil)
	if err != nil {
		return nil, err
	}
	stop := "endTurn"
	if resp.FinishReason == model.FinishLength {
		stop = "maxTokens"
	}
	text := strings.TrimSpace(resp.Message.Content)
	id := resp.Model
	if id == "" {
		id = info.ID
	}
	return &mcp.CreateMessageResult{Content: &mcp.TextContent{Text: text}, Model: id, Role: "assistant", StopReason: stop}, nil //nolint:staticcheck // SEP-2577: sampling stays for peers on protocol versions that have it (2025-11-25)
}
