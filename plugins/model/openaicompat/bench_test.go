package openaicompat_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/shared"

	"github.com/cordisgo/harness/internal/modeltest"
	"github.com/cordisgo/harness/plugins/model"
	"github.com/cordisgo/harness/plugins/model/openaicompat"
)

// benchRequest is one agent step: a system prompt, 100 tools with schemas, and a history of
// one earlier tool-calling turn and the current one.
func benchRequest() *model.Request {
	req := &model.Request{System: strings.Repeat("You are a careful coding agent. ", 40)}
	for i := range 100 {
		req.Tools = append(req.Tools, model.ToolDef{
			Name:        fmt.Sprintf("server%d__tool_%d", i/10, i),
			Description: "Reads or changes something on the server; a description of realistic length for a tool.",
			Parameters:  json.RawMessage(fmt.Sprintf(`{"type":"object","properties":{"path":{"type":"string","description":"A path."},"limit":{"type":"integer","minimum":1,"maximum":%d}},"required":["path"]}`, 100+i)),
		})
	}
	r1, r2 := "I will read the file first.", "Now the directory."
	req.Messages = []model.Message{
		{Role: model.RoleUser, Content: "Summarise the project."},
		{Role: model.RoleAssistant, Reasoning: &r1, ToolCalls: []model.ToolCall{{ID: "c1", Name: "server0__tool_1", Arguments: `{"path":"README.md"}`}}},
		{Role: model.RoleTool, ToolCallID: "c1", Content: strings.Repeat("readme text ", 200)},
		{Role: model.RoleAssistant, Reasoning: &r2, ToolCalls: []model.ToolCall{{ID: "c2", Name: "server0__tool_2", Arguments: `{"path":"."}`}}},
		{Role: model.RoleTool, ToolCallID: "c2", Content: "a\nb\nc"},
	}
	return req
}

var benchReply = modeltest.Reply{
	Reasoning: "The readme and the listing say enough; I can answer now without further tools.",
	Content:   "The project is a Go framework that hosts agent-harness plugins in a tree of scoped contexts.",
}

// bareParams is the same request written with openai-go's typed params, as a loop written
// directly on the client would: the schemas decoded once into maps, DeepSeek's fields as
// extra fields.
func bareParams(req *model.Request) openai.ChatCompletionNewParams {
	p := openai.ChatCompletionNewParams{
		Model:         modeltest.ModelFlash,
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
	}
	p.SetExtraFields(map[string]any{"thinking": map[string]string{"type": "enabled"}})
	p.Messages = append(p.Messages, openai.SystemMessage(req.System))
	for _, m := range req.Messages {
		switch m.Role {
		case model.RoleUser:
			p.Messages = append(p.Messages, openai.UserMessage(m.Content))
		case model.RoleTool:
			p.Messages = append(p.Messages, openai.ToolMessage(m.Content, m.ToolCallID))
		case model.RoleAssistant:
			a := openai.ChatCompletionAssistantMessageParam{Content: openai.ChatCompletionAssistantMessageParamContentUnion{OfString: param.NewOpt(m.Content)}}
			for _, tc := range m.ToolCalls {
				a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
					ID: tc.ID, Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: tc.Name, Arguments: tc.Arguments},
				}})
			}
			if m.Reasoning != nil {
				a.SetExtraFields(map[string]any{"reasoning_content": *m.Reasoning})
			}
			p.Messages = append(p.Messages, openai.ChatCompletionMessageParamUnion{OfAssistant: &a})
		}
	}
	for _, t := range req.Tools {
		var schema map[string]any
		_ = json.Unmarshal(t.Parameters, &schema)
		p.Tools = append(p.Tools, openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
			Name: t.Name, Description: openai.String(t.Description), Parameters: schema,
		}))
	}
	return p
}

// BenchmarkGenerate compares one request through the provider with the same request made
// directly on openai-go (typed params, the stream accumulated, reasoning read from the raw
// delta), both against the zero-latency local API. The ratio of the two is the provider's
// overhead; the server's own work is in both.
func BenchmarkGenerate(b *testing.B) {
	srv := modeltest.NewServer(modeltest.Options{Reply: func(*modeltest.Call) modeltest.Reply { return benchReply }})
	defer srv.Close()
	req := benchRequest()

	b.Run("provider", func(b *testing.B) {
		c, err := openaicompat.NewChat(openaicompat.ChatConfig{Name: "bench", Provider: openaicompat.ProviderDeepSeek, BaseURL: srv.URL, APIKey: srv.Key})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			resp, err := c.Generate(context.Background(), req, func(model.Delta) {})
			if err != nil || resp.Message.Content != benchReply.Content {
				b.Fatal(err, resp)
			}
		}
	})
	b.Run("bare-openai-go", func(b *testing.B) {
		client := openai.NewClient(option.WithBaseURL(srv.URL), option.WithAPIKey(srv.Key), option.WithMaxRetries(0))
		params := bareParams(req)
		b.ReportAllocs()
		for b.Loop() {
			stream := client.Chat.Completions.NewStreaming(context.Background(), params)
			var acc openai.ChatCompletionAccumulator
			var reasoning strings.Builder
			for stream.Next() {
				ch := stream.Current()
				acc.AddChunk(ch)
				if len(ch.Choices) > 0 {
					if f, ok := ch.Choices[0].Delta.JSON.ExtraFields["reasoning_content"]; ok && f.Raw() != "null" {
						var s string
						_ = json.Unmarshal([]byte(f.Raw()), &s)
						reasoning.WriteString(s)
					}
				}
			}
			if err := stream.Err(); err != nil || len(acc.Choices) == 0 || acc.Choices[0].Message.Content != benchReply.Content {
				b.Fatal(err)
			}
			_ = stream.Close()
		}
	})
}

// BenchmarkEncode is the provider's request body alone (100 tools, the history above).
func BenchmarkEncode(b *testing.B) {
	c, err := openaicompat.NewChat(openaicompat.ChatConfig{Name: "bench", APIKey: "k"})
	if err != nil {
		b.Fatal(err)
	}
	req := benchRequest()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Encode(req); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEncodeBare is the same body through openai-go's param encoder.
func BenchmarkEncodeBare(b *testing.B) {
	params := bareParams(benchRequest())
	b.ReportAllocs()
	for b.Loop() {
		if _, err := json.Marshal(params); err != nil {
			b.Fatal(err)
		}
	}
}
