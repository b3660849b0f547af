package gateway_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cordisgo/harness/gateway"
	"github.com/cordisgo/harness/plugins/mcpclient"
)

// conformanceServer builds go-sdk's conformance everything-server from the module cache
// (the go-sdk version of go.mod), or skips.
func conformanceServer(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "everything-server")
	out, err := exec.CommandContext(t.Context(), "go", "build", "-o", bin, "github.com/modelcontextprotocol/go-sdk/conformance/everything-server").CombinedOutput()
	if err != nil {
		msg := fmt.Sprintf("go-sdk's conformance everything-server does not build from the module cache: %v\n%s", err, out)
		if os.Getenv("CI") != "" {
			t.Fatal(msg + "(CI is set: this test must run, not skip)")
		}
		t.Skip(msg)
	}
	return bin
}

type notes struct {
	logs     chan *mcp.LoggingMessageParams //nolint:staticcheck // SEP-2577: server logs stay for peers on protocol versions that have them (2025-11-25)
	progress chan *mcp.ProgressNotificationParams
	tools    chan struct{}
	prompts  chan struct{}
}

func connectNotes(t *testing.T, url string) (*mcp.ClientSession, *notes) {
	t.Helper()
	n := &notes{logs: make(chan *mcp.LoggingMessageParams, 64), progress: make(chan *mcp.ProgressNotificationParams, 64), //nolint:staticcheck // SEP-2577: server logs stay for peers on protocol versions that have them (2025-11-25)
		tools: make(chan struct{}, 8), prompts: make(chan struct{}, 8)}
	c := mcp.NewClient(&mcp.Implementation{Name: "conformance", Version: "1"}, &mcp.ClientOptions{
		LoggingMessageHandler:       func(_ context.Context, r *mcp.LoggingMessageRequest) { n.logs <- r.Params }, //nolint:staticcheck // SEP-2577: server logs stay for peers on protocol versions that have them (2025-11-25)
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) { n.progress <- r.Params },
		ToolListChangedHandler:      func(context.Context, *mcp.ToolListChangedRequest) { n.tools <- struct{}{} },
		PromptListChangedHandler:    func(context.Context, *mcp.PromptListChangedRequest) { n.prompts <- struct{}{} },
	})
	return dial(t, c, url, nil), n
}

// within waits for ch (what it signals names it in the failure), at most 10 s.
func within(t *testing.T, what string, ch <-chan struct{}) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: not within 10 s", what)
	}
}

// TestConformanceServer puts go-sdk's conformance everything-server (stdio) behind the
// gateway and checks the per-server route like the server itself, and the aggregated route:
// identity, tools, logging per session, progress, prompts, completions, subscriptions,
// resources and list changes.
func TestConformanceServer(t *testing.T) {
	bin := conformanceServer(t)
	root := newTree(t)
	var cfg mcpclient.Config
	cfg.Default()
	cfg.ServerName, cfg.Transport, cfg.Command, cfg.FailOnStartupError = "conf", mcpclient.TransportStdio, bin, true
	mountConfig(t, root, cfg)
	f := serveGateway(t, root, gateway.Options{})

	cs, n := connectNotes(t, f.url+"/mcp/servers/conf")
	quiet, qn := connectNotes(t, f.url+"/mcp/servers/conf")
	if got := cs.InitializeResult().ServerInfo.Name; got != "mcp-conformance-test-server" {
		t.Fatalf("per-server route identifies as %q", got)
	}
	caps := cs.InitializeResult().Capabilities
	if caps.Tools == nil || caps.Prompts == nil || caps.Resources == nil || !caps.Resources.Subscribe || caps.Completions == nil || caps.Logging == nil { //nolint:staticcheck // SEP-2577: server logs stay for peers on protocol versions that have them (2025-11-25)
		t.Fatalf("capabilities not passed through: %+v", caps)
	}
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "test_simple_text"})
	if err != nil || res.IsError || text(res) == "" {
		t.Fatalf("test_simple_text: %v %+v", err, res)
	}

	// Logging: only the session that set a level gets the server's messages.
	if err := cs.SetLoggingLevel(t.Context(), &mcp.SetLoggingLevelParams{Level: "info"}); err != nil { //nolint:staticcheck // SEP-2577: server logs stay for peers on protocol versions that have them (2025-11-25)
		t.Fatal(err)
	}
	if res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "test_tool_with_logging"}); err != nil || res.IsError {
		t.Fatalf("test_tool_with_logging: %v %+v", err, res)
	}
	for range 3 {
		select {
		case <-n.logs:
		case <-time.After(10 * time.Second):
			t.Fatal("the session that set a level got fewer than 3 log messages")
		}
	}
	if len(qn.logs) != 0 {
		t.Fatalf("a session that set no level got %d log messages", len(qn.logs))
	}

	// Progress with the caller's token.
	p := &mcp.CallToolParams{Name: "test_tool_with_progress"}
	p.SetProgressToken("conf-token")
	if res, err := cs.CallTool(t.Context(), p); err != nil || res.IsError {
		t.Fatalf("test_tool_with_progress: %v %+v", err, res)
	}
	for range 3 {
		select {
		case got := <-n.progress:
			if got.ProgressToken != "conf-token" {
				t.Fatalf("progress token %v", got.ProgressToken)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("fewer than 3 progress notifications")
		}
	}
	if len(qn.progress) != 0 {
		t.Fatal("another session got progress")
	}

	// Prompts, completions, resources, subscriptions.
	gp, err := cs.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "test_prompt_with_arguments", Arguments: map[string]string{"arg1": "a", "arg2": "b"}})
	if err != nil || len(gp.Messages) == 0 {
		t.Fatalf("prompts/get: %v %+v", err, gp)
	}
	if _, err := cs.Complete(t.Context(), &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "test_prompt_with_arguments"},
		Argument: mcp.CompleteParamsArgument{Name: "arg1", Value: "x"}}); err != nil {
		t.Fatalf("completion/complete: %v", err)
	}
	uris := listed(t, cs.Resources(t.Context(), nil), func(r *mcp.Resource) string { return r.URI })
	if !slices.Contains(uris, "test://watched-resource") || len(uris) < 2 {
		t.Fatalf("resources: %v", uris)
	}
	if rr, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: uris[0]}); err != nil || len(rr.Contents) == 0 {
		t.Fatalf("read %s: %v", uris[0], err)
	}
	if err := cs.Subscribe(t.Context(), &mcp.SubscribeParams{URI: "test://watched-resource"}); err != nil {
		t.Fatalf("subscribe: %v", err)
	}

	// List changes reach both sessions.
	if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "test_trigger_tool_change"}); err != nil {
		t.Fatal(err)
	}
	within(t, "tools/list_changed", n.tools)
	within(t, "tools/list_changed on the other session", qn.tools)
	if !slices.Contains(toolNames(t, quiet), "__transient_tool_for_list_changed") {
		t.Fatal("the new tool is not listed")
	}
	if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "test_trigger_prompt_change"}); err != nil {
		t.Fatal(err)
	}
	within(t, "prompts/list_changed", n.prompts)

	// The aggregated route: public names for tools and prompts.
	agg, _ := connectNotes(t, f.url+"/mcp")
	if res, err := agg.CallTool(t.Context(), &mcp.CallToolParams{Name: "mcp__conf__test_simple_text"}); err != nil || res.IsError {
		t.Fatalf("aggregated call: %v %+v", err, res)
	}
	prompts := listed(t, agg.Prompts(t.Context(), nil), func(p *mcp.Prompt) string { return p.Name })
	if !slices.Contains(prompts, "mcp__conf__test_simple_prompt") || !slices.ContainsFunc(prompts, func(s string) bool { return strings.Contains(s, "transient_prompt") }) {
		t.Fatalf("aggregated prompts: %v", prompts)
	}
	if _, err := agg.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "mcp__conf__test_simple_prompt"}); err != nil {
		t.Fatalf("aggregated prompts/get: %v", err)
	}
}
