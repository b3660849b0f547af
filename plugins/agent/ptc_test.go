package agent

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/cordisgo/harness/ctx/ctxtest"
	"github.com/cordisgo/harness/plugins/agent/session"
	"github.com/cordisgo/harness/plugins/model"
	"github.com/cordisgo/harness/plugins/ptc"
	"github.com/cordisgo/harness/plugins/toolregistry"
)

// In PTC mode a request carries run_code alone and the declarations section; run_code runs
// the program against the agent's tools, its nested calls are logged, and a direct call of
// a tool is refused with a pointer to run_code. In standard mode neither appears.
func TestPTCMode(t *testing.T) {
	root := newRoot(t, nil, ptc.Plugin)
	ctxtest.MountActive(t, root, Plugin, map[string]any{"sessionsDir": "-"})
	reg, _ := toolregistry.Key.Get(root)
	if _, err := reg.Register(root, toolregistry.Tool{
		Name: "upper", Description: "Upper-cases text.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`),
		Meta:       map[string]string{"readOnlyHint": "true"},
		Execute: func(_ context.Context, call *toolregistry.Call) (*toolregistry.Result, error) {
			var in struct{ Text string }
			_ = json.Unmarshal(call.Args, &in)
			return toolregistry.TextResult(strings.ToUpper(in.Text)), nil
		},
	}); err != nil {
		t.Fatal(err)
	}
	svc, d := mainAgent(t, root)

	s := bareSession(svc, true)
	req, err := s.request(d, model.Info{})
	if err != nil {
		t.Fatal(err)
	}
	if len(req.Tools) != 1 || req.Tools[0].Name != "run_code" {
		t.Fatalf("PTC tools %+v", req.Tools)
	}
	if !strings.Contains(req.System, `"upper"(args: {`) || !strings.Contains(req.System, "run_code") {
		t.Fatalf("PTC prompt lacks the declarations:\n%s", req.System)
	}
	std, err := bareSession(svc, false).request(d, model.Info{})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(std.System, "run_code") || len(std.Tools) == 0 || std.Tools[0].Name == "run_code" {
		t.Fatalf("standard request: %q %+v", std.System, std.Tools)
	}

	code := `const parts = await Promise.all(["a", "b"].map((t) => tools.upper({text: t})));
console.log("two calls");
return parts.map((p) => p.content[0].type === "text" ? p.content[0].text : "").join("");`
	args, _ := json.Marshal(map[string]string{"code": code, "description": "upper-case two letters"})
	msg, ri := s.runCode(context.Background(), d, model.Info{}, model.ToolCall{ID: "call_1", Name: "run_code", Arguments: string(args)}, args)
	if ri.Outcome != "ok" || !strings.Contains(msg.Content, `"AB"`) || !strings.Contains(msg.Content, "two calls") {
		t.Fatalf("run_code: %+v %q", ri, msg.Content)
	}
	var nested []string
	for _, ev := range s.Events() {
		if ev.Type == session.EventCodeCall {
			nested = append(nested, ev.Call.ID+" "+ev.Call.Tool+" "+ev.Result.Outcome)
		}
	}
	if len(nested) != 2 || !strings.HasPrefix(nested[0], "call_1:code:") {
		t.Fatalf("nested calls logged: %v", nested)
	}

	msg, ri = s.runCode(context.Background(), d, model.Info{}, model.ToolCall{ID: "call_2", Name: "upper", Arguments: `{"text":"x"}`}, json.RawMessage(`{"text":"x"}`))
	if ri.Outcome != string(toolregistry.CodeUnknownTool) || !strings.Contains(msg.Content, "use run_code") {
		t.Fatalf("direct call in PTC mode: %+v %q", ri, msg.Content)
	}

	args, _ = json.Marshal(map[string]string{"code": "const x: number = 1;\nthrow new Error('no ' + x);", "description": "fails"})
	msg, ri = s.runCode(context.Background(), d, model.Info{}, model.ToolCall{ID: "call_3", Name: "run_code"}, args)
	if ri.Outcome != string(ptc.KindException) || !ri.IsError || !strings.Contains(msg.Content, "line 2") {
		t.Fatalf("failing program: %+v %q", ri, msg.Content)
	}
}

func TestSessionMode(t *testing.T) {
	for _, c := range []struct {
		agent, asked string
		ptc          bool
		err          string
	}{
		{"both", "", false, ""},
		{"both", "ptc", true, ""},
		{"ptc", "", true, ""},
		{"standard", "", false, ""},
		{"standard", "ptc", false, "offers standard mode only"},
		{"ptc", "standard", false, "offers ptc mode only"},
		{"both", "code", false, "unknown mode"},
	} {
		d := &agentDef{cfg: Config{Mode: c.agent}}
		got, err := d.sessionMode(c.asked)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s/%s: %v, want %q", c.agent, c.asked, err, c.err)
			}
			continue
		}
		if err != nil || got != c.ptc {
			t.Errorf("%s/%s: %v %v", c.agent, c.asked, got, err)
		}
	}
	var cfg Config
	cfg.Default()
	cfg.Mode = "code"
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "mode") {
		t.Errorf("mode code: %v", err)
	}
}
