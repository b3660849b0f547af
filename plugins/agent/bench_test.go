package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/internal/modeltest"
	"github.com/cordisgo/harness/plugins/agent"
	"github.com/cordisgo/harness/plugins/model"
	"github.com/cordisgo/harness/plugins/model/openaicompat"
	"github.com/cordisgo/harness/plugins/sysprompt"
	"github.com/cordisgo/harness/plugins/toolregistry"
)

// benchSchema is a tool schema of the size MCP servers send (a few typed properties).
func benchSchema(i int) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`{"type":"object","properties":{"path":{"type":"string","description":"The file or directory %d works on."},`+
		`"recursive":{"type":"boolean","description":"Whether to descend into directories."},"limit":{"type":"integer","minimum":1,"maximum":1000,`+
		`"description":"How many entries to return at most."}},"required":["path"],"additionalProperties":false}`, i))
}

// benchTree is a root with the registry, the prompt, n tools, the model on srv and the agent.
func benchTree(tb testing.TB, srv *modeltest.Server, n int) (*ctx.Context, *agent.Service) {
	root := ctx.New(ctx.Options{})
	tb.Cleanup(func() { _ = root.Scope().Dispose(context.Background()) })
	chat, err := openaicompat.NewChat(openaicompat.ChatConfig{Name: "default", Provider: openaicompat.ProviderDeepSeek, BaseURL: srv.URL, APIKey: srv.Key})
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := model.Key.Provide(root, model.NewService(map[string]model.Model{"default": chat}, "")); err != nil {
		tb.Fatal(err)
	}
	for _, p := range []struct {
		def ctx.PluginDef
		cfg any
	}{{toolregistry.Plugin, nil}, {sysprompt.Plugin, map[string]any{"preamble": "You are a benchmark agent."}}} {
		if _, err := root.Plugin(p.def, p.cfg); err != nil {
			tb.Fatal(err)
		}
	}
	if err := root.Settle(context.Background()); err != nil {
		tb.Fatal(err)
	}
	reg, _ := toolregistry.Key.Get(root)
	for i := range n {
		_, err := reg.Register(root, toolregistry.Tool{Name: fmt.Sprintf("mcp__bench__tool_%03d", i),
			Description: fmt.Sprintf("Benchmark tool number %d: lists entries of a path.", i), Parameters: benchSchema(i),
			Meta: map[string]string{"server": "bench", "readOnlyHint": "true"},
			Execute: func(context.Context, *toolregistry.Call) (*toolregistry.Result, error) {
				return toolregistry.TextResult("ok"), nil
			}})
		if err != nil {
			tb.Fatal(err)
		}
	}
	if _, err := root.Plugin(agent.Plugin, map[string]any{"sessionsDir": tb.TempDir()}); err != nil {
		tb.Fatal(err)
	}
	if err := root.Settle(context.Background()); err != nil {
		tb.Fatal(err)
	}
	svc, ok := agent.Key.Get(root)
	if !ok {
		tb.Fatal("no agent")
	}
	return root, svc
}

// bareLoop is a chat loop written directly on openai-go: the same tools (decoded once), the
// history in the client library's types, streaming, the answer assembled from the deltas.
type bareLoop struct {
	client openai.Client
	tools  []openai.ChatCompletionToolUnionParam
	msgs   []openai.ChatCompletionMessageParamUnion
}

func newBareLoop(srv *modeltest.Server, n int) *bareLoop {
	l := &bareLoop{client: openai.NewClient(option.WithBaseURL(srv.URL), option.WithAPIKey(srv.Key), option.WithMaxRetries(0))}
	for i := range n {
		var params shared.FunctionParameters
		_ = json.Unmarshal(benchSchema(i), &params)
		l.tools = append(l.tools, openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
			Name: fmt.Sprintf("mcp__bench__tool_%03d", i), Description: openai.String(fmt.Sprintf("Benchmark tool number %d: lists entries of a path.", i)),
			Parameters: params}))
	}
	l.reset()
	return l
}

func (l *bareLoop) reset() {
	l.msgs = []openai.ChatCompletionMessageParamUnion{openai.SystemMessage("You are a benchmark agent.")}
}

func (l *bareLoop) turn(cx context.Context, text string) (string, error) {
	l.msgs = append(l.msgs, openai.UserMessage(text))
	stream := l.client.Chat.Completions.NewStreaming(cx, openai.ChatCompletionNewParams{Model: modeltest.ModelFlash,
		Messages: l.msgs, Tools: l.tools, StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}})
	defer func() { _ = stream.Close() }()
	var acc openai.ChatCompletionAccumulator
	for stream.Next() {
		acc.AddChunk(stream.Current())
	}
	if err := stream.Err(); err != nil {
		return "", err
	}
	if len(acc.Choices) == 0 {
		return "", fmt.Errorf("no answer")
	}
	answer := acc.Choices[0].Message.Content
	l.msgs = append(l.msgs, openai.AssistantMessage(answer))
	return answer, nil
}

// BenchmarkTurnOverhead runs, turn by turn and side by side, the agent's loop and a bare
// loop on the same client library against a local zero-latency endpoint with 100 tools:
// each turn is one request answered with text. Sessions are restarted every 20 turns in
// both. It reports the time of a turn of each, their ratio and the harness's overhead per
// turn (the difference).
func BenchmarkTurnOverhead(b *testing.B) {
	srv := modeltest.NewServer(modeltest.Options{Reply: func(*modeltest.Call) modeltest.Reply {
		return modeltest.Reply{Content: "Done: nothing to change."}
	}})
	defer srv.Close()
	_, svc := benchTree(b, srv, 100)
	bare := newBareLoop(srv, 100)
	cx := context.Background()
	var s *agent.Session
	var harness, direct time.Duration
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if i%20 == 0 {
			if s != nil {
				_ = s.Close()
			}
			var err error
			if s, err = svc.Start(agent.StartOptions{}); err != nil {
				b.Fatal(err)
			}
			bare.reset()
		}
		t0 := time.Now()
		if _, err := s.Send(cx, "Check the files."); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if _, err := bare.turn(cx, "Check the files."); err != nil {
			b.Fatal(err)
		}
		harness += t1.Sub(t0)
		direct += time.Since(t1)
	}
	if s != nil {
		_ = s.Close()
	}
	n := float64(b.N)
	b.ReportMetric(float64(harness.Microseconds())/n, "harness-µs/turn")
	b.ReportMetric(float64(direct.Microseconds())/n, "bare-µs/turn")
	b.ReportMetric(float64(harness)/float64(direct), "ratio")
	b.ReportMetric(float64((harness-direct).Microseconds())/n, "overhead-µs/turn")
}
