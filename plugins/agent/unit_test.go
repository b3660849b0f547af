package agent

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/plugins/model"
	"github.com/cordisgo/harness/plugins/toolregistry"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestMaskArgs(t *testing.T) {
	cases := []struct{ in, want string }{
		{`{"text":"hi"}`, `{"text":"hi"}`},
		{`{"token": "abcdefghijklmnop", "n": 1}`, `{"token": "[redacted]", "n": 1}`},
		{`{"a":{"apiKey":"sk-123456789012","keep":"x"},"list":[{"password":"hunter2hunter2"}]}`,
			`{"a":{"apiKey":"[redacted]","keep":"x"},"list":[{"password":"[redacted]"}]}`},
		{`{"token":"${secret:gh}"}`, `{"token":"${secret:gh}"}`},         // a reference says where, not what
		{`{"token":`, `{"token":`},                                       // not JSON: unchanged
		{`{"tokens":["a"],"x":"token"}`, `{"tokens":["a"],"x":"token"}`}, // only string values of such keys
		{`{"nested":{"token":{"x":"y"}},"z":"q"}`, `{"nested":{"token":{"x":"y"}},"z":"q"}`},
		{`{"k\"ey":"v","secret":"s3cr3ts3cr3t"}`, `{"k\"ey":"v","secret":"[redacted]"}`},
	}
	for _, c := range cases {
		if got := maskArgs(c.in); got != c.want {
			t.Errorf("maskArgs(%s) = %s, want %s", c.in, got, c.want)
		}
	}
}

func TestConfigValidate(t *testing.T) {
	_, err := ctx.Decode[Config](map[string]any{"maxSteps": 0, "permissions": map[string]any{"default": "maybe", "deny": []any{"["}}})
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{"maxSteps", "permissions.default", `"allow", "ask" or "deny"`, "permissions.deny[0]"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	cfg, err := ctx.Decode[Config](map[string]any{})
	if err != nil || cfg.MaxSteps != 50 || cfg.MaxParallel != 10 || cfg.LargeResultBytes != 51200 || cfg.Permissions.Default != ActionAsk {
		t.Fatalf("defaults: %+v, %v", cfg, err)
	}
}

func TestDefaultSessionsDir(t *testing.T) {
	env := map[string]string{"XDG_STATE_HOME": "/state", "HOME": "/home/u"}
	get := func(k string) string { return env[k] }
	if d, err := DefaultSessionsDir(get); err != nil || d != filepath.Join("/state", "harness", "sessions") {
		t.Errorf("got %q, %v", d, err)
	}
	delete(env, "XDG_STATE_HOME")
	if d, err := DefaultSessionsDir(get); err != nil || d != filepath.Join("/home/u", ".local", "state", "harness", "sessions") {
		t.Errorf("got %q, %v", d, err)
	}
	delete(env, "HOME")
	if _, err := DefaultSessionsDir(get); err == nil {
		t.Error("no error without HOME")
	}
}

func TestDecide(t *testing.T) {
	ro := map[string]string{"server": "gh", "mcpTool": "list_issues", "readOnlyHint": "true"}
	rw := map[string]string{"server": "gh", "mcpTool": "create_issue", "readOnlyHint": "false"}
	list := toolregistry.Info{Name: "mcp__gh__list_issues", Meta: ro}
	create := toolregistry.Info{Name: "mcp__gh__create_issue", Meta: rw}
	other := toolregistry.Info{Name: "local_tool"}
	sess := &Session{grants: map[string]bool{}}
	decide := func(p Permissions, ti toolregistry.Info) toolregistry.Action {
		d := &agentDef{cfg: Config{Permissions: p}}
		return d.decide(sess, ti).Action
	}
	if a := decide(Permissions{Default: ActionAsk}, list); a != toolregistry.Allow {
		t.Errorf("read-only: %s", a)
	}
	no := false
	if a := decide(Permissions{Default: ActionAsk, AllowReadOnly: &no}, list); a != toolregistry.Ask {
		t.Errorf("read-only without allowReadOnly: %s", a)
	}
	if a := decide(Permissions{Default: ActionAsk}, create); a != toolregistry.Ask {
		t.Errorf("default ask: %s", a)
	}
	if a := decide(Permissions{Default: ActionDeny}, other); a != toolregistry.Deny {
		t.Errorf("default deny: %s", a)
	}
	// Deny beats allow, whatever the order and the form of the rules.
	if a := decide(Permissions{Default: ActionAllow, Allow: []string{"mcp__gh__*"}, Deny: []string{"gh/create_*"}}, create); a != toolregistry.Deny {
		t.Errorf("deny by server rule: %s", a)
	}
	if a := decide(Permissions{Default: ActionDeny, Allow: []string{"gh/*"}}, create); a != toolregistry.Allow {
		t.Errorf("allow by server rule: %s", a)
	}
	if a := decide(Permissions{Default: ActionAllow, Ask: []string{"*"}}, other); a != toolregistry.Ask {
		t.Errorf("ask rule: %s", a)
	}
	if a := decide(Permissions{Default: ActionDeny, Deny: []string{"mcp__gh__list_*"}}, list); a != toolregistry.Deny {
		t.Errorf("deny beats read-only: %s", a)
	}
	sess.grants["mcp__gh__create_issue"] = true
	if a := decide(Permissions{Default: ActionAsk, Ask: []string{"*"}}, create); a != toolregistry.Allow {
		t.Errorf("session grant: %s", a)
	}
	if a := decide(Permissions{Default: ActionAsk, Deny: []string{"*"}}, create); a != toolregistry.Deny {
		t.Errorf("deny beats a session grant: %s", a)
	}
}

func TestStoreTornTail(t *testing.T) {
	st := OpenStore(t.TempDir())
	lf, err := st.create("s1")
	if err != nil {
		t.Fatal(err)
	}
	reasoning := ""
	events := []Event{
		{Seq: 1, Type: EventSession, Header: &Header{ID: "s1", Created: time.Now()}},
		{Seq: 2, Type: EventUser, Text: "hello"},
		{Seq: 3, Type: EventAssistant, Message: &model.Message{Role: model.RoleAssistant, Reasoning: &reasoning,
			ToolCalls: []model.ToolCall{{ID: "c1", Name: "a", Arguments: "{}"}, {ID: "c2", Name: "b", Arguments: "{}"}}}},
		{Seq: 4, Type: EventToolResult, Call: &CallInfo{ID: "c2", Tool: "b"}, Message: &model.Message{Role: model.RoleTool, ToolCallID: "c2", Content: "two"}},
	}
	for i := range events {
		if err := lf.write(&events[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := lf.close(); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(st.SessionDir("s1"), logName)
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(`{"seq":5,"type":"tool.res`); err != nil { // the process died here
		t.Fatal(err)
	}
	_ = f.Close()
	got, size, err := st.read("s1")
	if err != nil || len(got) != 4 {
		t.Fatalf("read: %d events, %v", len(got), err)
	}
	hist, open := rebuild(got)
	if len(open) != 1 || open[0].ID != "c1" {
		t.Fatalf("open calls: %+v", open)
	}
	// user, assistant, then the results in the calls' order: c1 (aborted), c2.
	if len(hist) != 4 || hist[2].ToolCallID != "c1" || !strings.Contains(hist[2].Content, "aborted") || hist[3].Content != "two" {
		t.Fatalf("history: %+v", hist)
	}
	if hist[1].Reasoning == nil || *hist[1].Reasoning != "" {
		t.Errorf("an empty reasoning must come back as empty, not absent: %+v", hist[1])
	}
	lf, err = st.reopen("s1", size)
	if err != nil {
		t.Fatal(err)
	}
	if err := lf.write(&Event{Seq: 5, Type: EventUser, Text: "again"}); err != nil {
		t.Fatal(err)
	}
	_ = lf.close()
	got, err = st.Read("s1")
	if err != nil || len(got) != 5 || got[4].Text != "again" {
		t.Fatalf("after reopening: %d events, %v", len(got), err)
	}
	// A bad line that is not the last is an error naming the line.
	data, _ := os.ReadFile(p)
	_ = os.WriteFile(p, append([]byte(strings.Replace(string(data), `"hello"`, `hello`, 1)), '\n'), 0o600)
	if _, err := st.Read("s1"); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("corrupt line: %v", err)
	}
	if _, err := st.Read("../etc"); !errors.Is(err, ErrUnknownSession) {
		t.Errorf("path in id: %v", err)
	}
	list, err := st.List()
	if err != nil || len(list) != 1 || list[0].ID != "s1" || list[0].Err == "" {
		t.Errorf("list: %+v, %v", list, err)
	}
}

func TestPreview(t *testing.T) {
	text := strings.Repeat("é", 40_000) // 80,000 bytes, two per rune
	p := preview(text, 50<<10, "call_1", "/tmp/x/results/call_1.txt")
	if len(p) > 20_000 || !strings.Contains(p, "read_tool_result") || !strings.Contains(p, "/tmp/x/results/call_1.txt") {
		t.Fatalf("preview: %d bytes: %.200q", len(p), p)
	}
	if !strings.HasPrefix(p, "é") || !strings.HasSuffix(p, "é") {
		t.Error("cut inside a rune")
	}
}
