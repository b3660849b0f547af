package openaicompat

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/cordisgo/harness/internal/jsonstr"
	"github.com/cordisgo/harness/plugins/model"
)

// The request body is written here, field by field in a fixed order, rather than by
// openai-go's reflective encoder: it is DeepSeek's cache key. Two requests with the same
// input are byte-identical; a tool's parameters are copied as the bytes the tool's owner
// gave (key order, numbers and spacing kept); strings are escaped as encoding/json does
// without its HTML escaping. See docs/agent.md, "Prefix discipline".

// wire is what a request needs beyond the Request: the resolved model settings.
type wire struct {
	model      string
	thinking   bool
	sendThink  bool // write the thinking field (DeepSeek, or configured explicitly)
	effort     string
	maxTokens  int
	imageInput bool
}

// encodeRequest appends the request body to b.
func encodeRequest(b []byte, req *model.Request, w wire) ([]byte, error) {
	// The order keeps what changes least first: the settings, the tools, the messages (which
	// only grow during a session), then the per-request tool_choice. A request's body is
	// then a byte prefix of the next one's up to its last message.
	b = append(b, `{"model":`...)
	b = jsonstr.Append(b, w.model, false)
	b = append(b, `,"stream":true,"stream_options":{"include_usage":true}`...)
	if w.sendThink {
		if w.thinking {
			b = append(b, `,"thinking":{"type":"enabled"}`...)
		} else {
			b = append(b, `,"thinking":{"type":"disabled"}`...)
		}
	}
	if w.thinking && w.effort != "" {
		b = append(b, `,"reasoning_effort":`...)
		b = jsonstr.Append(b, w.effort, false)
	}
	if w.maxTokens > 0 {
		b = append(b, `,"max_tokens":`...)
		b = strconv.AppendInt(b, int64(w.maxTokens), 10)
	}
	if len(req.Tools) > 0 {
		b = append(b, `,"tools":[`...)
		for i := range req.Tools {
			if i > 0 {
				b = append(b, ',')
			}
			t := &req.Tools[i]
			b = append(b, `{"type":"function","function":{"name":`...)
			b = jsonstr.Append(b, t.Name, false)
			if t.Description != "" {
				b = append(b, `,"description":`...)
				b = jsonstr.Append(b, t.Description, false)
			}
			if len(t.Parameters) > 0 {
				b = append(b, `,"parameters":`...)
				b = append(b, t.Parameters...)
			}
			b = append(b, `}}`...)
		}
		b = append(b, ']')
	}
	b = append(b, `,"messages":[`...)
	first := true
	if req.System != "" {
		b = append(b, `{"role":"system","content":`...)
		b = jsonstr.Append(b, req.System, false)
		b = append(b, '}')
		first = false
	}
	needs := passbackNeeded(req.Messages, w.thinking)
	for i := range req.Messages {
		if !first {
			b = append(b, ',')
		}
		first = false
		var err error
		if b, err = appendMessage(b, &req.Messages[i], i, needs[i], w); err != nil {
			return nil, err
		}
	}
	b = append(b, ']')
	if req.ToolChoice != "" {
		b = append(b, `,"tool_choice":`...)
		b = jsonstr.Append(b, string(req.ToolChoice), false)
	}
	return append(b, '}'), nil
}

// passbackNeeded marks the assistant messages that must carry reasoning_content under
// DeepSeek's documented rule: in thinking mode, every assistant message of a stretch
// between user messages that made tool calls.
func passbackNeeded(msgs []model.Message, thinking bool) []bool {
	out := make([]bool, len(msgs))
	if !thinking {
		return out
	}
	start := 0
	for i := 0; i <= len(msgs); i++ {
		if i < len(msgs) && msgs[i].Role != model.RoleUser {
			continue
		}
		calls := false
		for j := start; j < i; j++ {
			calls = calls || (msgs[j].Role == model.RoleAssistant && len(msgs[j].ToolCalls) > 0)
		}
		if calls {
			for j := start; j < i; j++ {
				out[j] = msgs[j].Role == model.RoleAssistant
			}
		}
		start = i + 1
	}
	return out
}

var emptyReasoning = ""

func appendMessage(b []byte, m *model.Message, i int, needsReasoning bool, w wire) ([]byte, error) {
	switch m.Role {
	case model.RoleSystem, model.RoleUser:
		b = append(b, `{"role":"`...)
		b = append(b, m.Role...)
		b = append(b, `","content":`...)
		if len(m.Images) == 0 {
			b = jsonstr.Append(b, m.Content, false)
		} else {
			if !w.imageInput {
				return nil, fmt.Errorf("%w: messages[%d] has %d image(s), and model %s does not accept image input (imageInput is off)", ErrInvalidRequest, i, len(m.Images), w.model)
			}
			b = append(b, `[{"type":"text","text":`...)
			b = jsonstr.Append(b, m.Content, false)
			b = append(b, '}')
			for _, img := range m.Images {
				b = append(b, `,{"type":"image_url","image_url":{"url":"data:`...)
				b = append(b, img.MIMEType...)
				b = append(b, `;base64,`...)
				b = base64.StdEncoding.AppendEncode(b, img.Data)
				b = append(b, `"}}`...)
			}
			b = append(b, ']')
		}
		return append(b, '}'), nil
	case model.RoleAssistant:
		b = append(b, `{"role":"assistant","content":`...)
		b = jsonstr.Append(b, m.Content, false)
		r := m.Reasoning
		if r == nil && needsReasoning {
			// A turn made with thinking off and re-sent with it on (a mid-session toggle):
			// the documented rule wants the field, and DeepSeek accepts it empty.
			r = &emptyReasoning
		}
		if r != nil {
			b = append(b, `,"reasoning_content":`...)
			b = jsonstr.Append(b, *r, false)
		}
		if len(m.ToolCalls) > 0 {
			b = append(b, `,"tool_calls":[`...)
			for j, tc := range m.ToolCalls {
				if j > 0 {
					b = append(b, ',')
				}
				b = append(b, `{"id":`...)
				b = jsonstr.Append(b, tc.ID, false)
				b = append(b, `,"type":"function","function":{"name":`...)
				b = jsonstr.Append(b, tc.Name, false)
				b = append(b, `,"arguments":`...)
				b = jsonstr.Append(b, tc.Arguments, false)
				b = append(b, `}}`...)
			}
			b = append(b, ']')
		}
		return append(b, '}'), nil
	case model.RoleTool:
		if len(m.Images) > 0 {
			return nil, fmt.Errorf("%w: messages[%d]: a tool message carries text only in Chat Completions (turn its %d image(s) into text)", ErrInvalidRequest, i, len(m.Images))
		}
		b = append(b, `{"role":"tool","tool_call_id":`...)
		b = jsonstr.Append(b, m.ToolCallID, false)
		b = append(b, `,"content":`...)
		b = jsonstr.Append(b, m.Content, false)
		return append(b, '}'), nil
	}
	return nil, fmt.Errorf("%w: messages[%d]: unknown role %q (expected system, user, assistant or tool)", ErrInvalidRequest, i, m.Role)
}

// validParameters reports whether p is one JSON object.
func validParameters(p json.RawMessage) bool {
	for _, c := range p {
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		case '{':
			return json.Valid(p)
		}
		return false
	}
	return false
}
