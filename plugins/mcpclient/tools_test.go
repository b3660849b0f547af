package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/ctx/ctxtest"
	"github.com/cordisgo/harness/internal/demoserver"
	"github.com/cordisgo/harness/permission"
	"github.com/cordisgo/harness/plugins/toolregistry"

	"github.com/cordisgo/harness/testkit/mcptest"
)

// rawTool adds a tool with a raw handler (no schema inference) to srv.
func rawTool(srv *mcp.Server, tool *mcp.Tool, h mcp.ToolHandler) {
	if tool.InputSchema == nil {
		tool.InputSchema = json.RawMessage(`{"type":"object"}`)
	}
	srv.AddTool(tool, h)
}

func bareServer() *mcp.Server {
	return mcp.NewServer(&mcp.Implementation{Name: "bare", Version: "0.0.1"}, nil)
}

// TestToolNamesAndPassThrough (item 2): public names mcp__<server>__<tool>, hashed when the
// raw name needs it; the raw name goes on the wire; descriptions and schemas pass through.
func TestToolNamesAndPassThrough(t *testing.T) {
	e := newEnv(t)
	srv := bareServer()
	var called atomic.Value
	rawTool(srv, &mcp.Tool{Name: "admin.reset", Description: "Resets the admin.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"force":{"type":"boolean","description":"really"}},"required":["force"]}`)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			called.Store(req.Params.Name)
			return textResult("reset done"), nil
		})
	rawTool(srv, &mcp.Tool{Name: "admin_reset"}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return textResult("clean"), nil
	})
	e.mount(nil, memConfig("srv"), &hooks{dial: newMemServer(srv).dial})
	hashed := PublicToolName("srv", "admin.reset")
	if !strings.HasPrefix(hashed, "mcp__srv__admin_reset_") || len(hashed) != len("mcp__srv__admin_reset_")+12 {
		t.Fatalf("public name %q", hashed)
	}
	if got := e.names(nil); !slices.Equal(got, []string{"mcp__srv__admin_reset", hashed}) {
		t.Fatalf("tools %v", got)
	}
	info, _ := e.reg.Lookup(e.root, hashed)
	if info.Description != "Resets the admin." || !strings.Contains(string(info.Parameters), `"force"`) ||
		info.Meta["mcpTool"] != "admin.reset" || info.Meta["server"] != "srv" || info.Owner != "mcp:srv" {
		t.Errorf("info %+v", info)
	}
	if _, err := e.call(nil, hashed, `{}`); !errors.Is(err, toolregistry.ErrInvalidArgs) {
		t.Errorf("missing required argument: %v", err)
	}
	if got := e.mustCall(nil, hashed, `{"force":true}`).Text(); got != "reset done" || called.Load() != "admin.reset" {
		t.Errorf("call = %q, server saw %v", got, called.Load())
	}
	if got := e.mustCall(nil, "mcp__srv__admin_reset", `{}`).Text(); got != "clean" {
		t.Errorf("admin_reset = %q", got)
	}
}

// TestAppToolMeta: a tool's MCP App (_meta.ui, SEP-1865) reaches its registry metadata — the
// view's ui:// URI (the flat, deprecated key too) and the visibility — and an app-only tool
// is marked so (AppOnly); a resourceUri that is not ui:// is no view.
func TestAppToolMeta(t *testing.T) {
	e := newEnv(t)
	srv := bareServer()
	ok := func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return textResult("ok"), nil }
	rawTool(srv, &mcp.Tool{Name: "show", Meta: mcp.Meta{"ui": map[string]any{"resourceUri": "ui://demo/view.html"}}}, ok)
	rawTool(srv, &mcp.Tool{Name: "refresh", Meta: mcp.Meta{"ui": map[string]any{"resourceUri": "ui://demo/view.html", "visibility": []any{"app"}}}}, ok)
	rawTool(srv, &mcp.Tool{Name: "both", Meta: mcp.Meta{"ui": map[string]any{"resourceUri": "ui://demo/view.html", "visibility": []any{"model", "app"}}}}, ok)
	rawTool(srv, &mcp.Tool{Name: "flat", Meta: mcp.Meta{"ui/resourceUri": "ui://demo/flat.html"}}, ok)
	rawTool(srv, &mcp.Tool{Name: "web", Meta: mcp.Meta{"ui": map[string]any{"resourceUri": "https://example.com/"}}}, ok)
	e.mount(nil, memConfig("srv"), &hooks{dial: newMemServer(srv).dial})
	for _, c := range []struct {
		tool, uri, vis string
		appOnly        bool
	}{
		{"show", "ui://demo/view.html", "", false},
		{"refresh", "ui://demo/view.html", "app", true},
		{"both", "ui://demo/view.html", "model,app", false},
		{"flat", "ui://demo/flat.html", "", false},
		{"web", "", "", false},
	} {
		info, found := e.reg.Lookup(e.root, "mcp__srv__"+c.tool)
		if !found {
			t.Fatalf("%s: not registered", c.tool)
		}
		if info.Meta[MetaUIResource] != c.uri || info.Meta[MetaUIVisibility] != c.vis || permission.AppOnly(info.Meta) != c.appOnly {
			t.Errorf("%s: meta %v, app only %v", c.tool, info.Meta, permission.AppOnly(info.Meta))
		}
		if _, kept := info.Meta[MetaUI]; kept != (c.uri != "") {
			t.Errorf("%s: the raw _meta of its app kept: %v", c.tool, kept)
		}
	}
}

// TestPaginationDrained (item 2): every page of tools/list is read.
func TestPaginationDrained(t *testing.T) {
	e := newEnv(t)
	srv := demoserver.New(demoserver.Options{PageSize: 2})
	lists := countRequests(srv, "tools/list")
	e.mount(nil, memConfig("srv"), &hooks{dial: newMemServer(srv).dial})
	if got := len(e.names(nil)); got != 8 {
		t.Fatalf("%d tools: %v", got, e.names(nil))
	}
	if n := lists.Load(); n != 4 {
		t.Errorf("%d tools/list requests for 8 tools in pages of 2", n)
	}
}

// TestAllowedTools (item 2): the allow-list filters at discovery, on every listing; masked
// tools are uncallable.
func TestAllowedTools(t *testing.T) {
	e := newEnv(t)
	cfg := memConfig("srv")
	cfg.AllowedTools = &[]string{"echo", "add_tool", "extra_y", "mcp__srv__add"}
	e.mount(nil, cfg, &hooks{dial: newMemServer(demo()).dial})
	if got := e.names(nil); !slices.Equal(got, []string{"mcp__srv__add_tool", "mcp__srv__echo"}) {
		t.Fatalf("tools %v", got)
	}
	if _, err := e.call(nil, "mcp__srv__add", `{"a":1,"b":2}`); !errors.Is(err, toolregistry.ErrUnknownTool) {
		t.Errorf("masked tool: %v", err)
	}
	if !strings.Contains(e.log.String(), `allowedTools names 2 tool(s) the server did not list: [\"extra_y\" \"mcp__srv__add\"]`) {
		t.Errorf("no warning about the unlisted entries:\n%s", e.log.String())
	}
	changed := ctxtest.Record(t, e.root, toolregistry.Changed)
	e.mustCall(nil, "mcp__srv__add_tool", `{"name":"x"}`) // masked
	e.mustCall(nil, "mcp__srv__add_tool", `{"name":"y"}`) // admitted
	ev := changed.WaitFor(t, func(ch []toolregistry.Change) bool { return len(ch) > 0 })
	if !slices.Equal(ev[0].Added, []string{"mcp__srv__extra_y"}) || len(ev[0].Removed) != 0 {
		t.Errorf("change %+v", ev[0])
	}
	if got := e.names(nil); !slices.Equal(got, []string{"mcp__srv__add_tool", "mcp__srv__echo", "mcp__srv__extra_y"}) {
		t.Errorf("tools after list_changed %v", got)
	}
}

// TestDeniedTools: deniedTools removes tools at discovery, alone or with allowedTools
// (deny wins), and a denied tool is uncallable.
func TestDeniedTools(t *testing.T) {
	e := newEnv(t)
	cfg := memConfig("den")
	cfg.DeniedTools = []string{"fail", "slow"}
	e.mount(nil, cfg, &hooks{dial: newMemServer(demo()).dial})
	if got := e.names(nil); slices.Contains(got, "mcp__den__fail") || slices.Contains(got, "mcp__den__slow") || !slices.Contains(got, "mcp__den__echo") {
		t.Fatalf("tools %v: fail and slow denied, the rest listed", got)
	}
	if _, err := e.call(nil, "mcp__den__fail", `{}`); !errors.Is(err, toolregistry.ErrUnknownTool) {
		t.Errorf("denied tool: %v", err)
	}

	both := memConfig("both")
	both.AllowedTools = &[]string{"echo", "add"}
	both.DeniedTools = []string{"add"}
	e.mount(nil, both, &hooks{dial: newMemServer(demo()).dial})
	var mine []string
	for _, n := range e.names(nil) {
		if strings.HasPrefix(n, "mcp__both__") {
			mine = append(mine, n)
		}
	}
	if !slices.Equal(mine, []string{"mcp__both__echo"}) {
		t.Errorf("allowed [echo add] denied [add]: tools %v, want deny to win", mine)
	}
}

// TestNoToolsCapability (item 2): a server without tools connects with an empty set and is
// never asked for tools.
func TestNoToolsCapability(t *testing.T) {
	e := newEnv(t)
	srv := bareServer()
	lists := countRequests(srv, "tools/list")
	s := e.mount(nil, memConfig("srv"), &hooks{dial: newMemServer(srv).dial})
	ctxtest.RequireState(t, s, ctx.Active)
	st := e.st.waitPhase(t, "srv", PhaseConnected)
	if len(st.Tools) != 0 || len(e.names(nil)) != 0 || lists.Load() != 0 {
		t.Errorf("tools %v / %v, lists %d", st.Tools, e.names(nil), lists.Load())
	}
}

// listTamper rewrites tools/list results while on is set, signalling served each time.
func listTamper(srv *mcp.Server, on *atomic.Bool, tamper func(*mcp.ListToolsResult) (*mcp.ListToolsResult, error)) (served chan struct{}) {
	served = make(chan struct{}, 8)
	srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(cx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(cx, method, req)
			if method == "tools/list" && err == nil && on.Load() {
				defer func() { served <- struct{}{} }()
				return tamper(res.(*mcp.ListToolsResult))
			}
			return res, err
		}
	})
	return served
}

// refreshRefused makes the server announce a change while its listings are tampered with,
// then one more with honest listings, and checks that the tampered listing changed nothing:
// the only registry change is the honest one, adding both tools. want is logged.
func refreshRefused(t *testing.T, e *env, tamper *atomic.Bool, served chan struct{}, want string) {
	t.Helper()
	changed := ctxtest.Record(t, e.root, toolregistry.Changed)
	tamper.Store(true)
	e.mustCall(nil, "mcp__srv__add_tool", `{"name":"x"}`)
	recv(t, served, "tampered listing")
	tamper.Store(false)
	e.mustCall(nil, "mcp__srv__add_tool", `{"name":"y"}`)
	ev := changed.WaitFor(t, func(ch []toolregistry.Change) bool { return len(ch) > 0 })
	if len(ev) != 1 || !slices.Equal(ev[0].Added, []string{"mcp__srv__extra_x", "mcp__srv__extra_y"}) || len(ev[0].Removed) != 0 {
		t.Errorf("changes %+v", ev)
	}
	if log := e.log.String(); !strings.Contains(log, "tool re-sync failed; keeping the previous tools") || !strings.Contains(log, want) {
		t.Errorf("log lacks %q:\n%s", want, log)
	}
}

func duplicateFirst(res *mcp.ListToolsResult) (*mcp.ListToolsResult, error) {
	out := *res
	out.Tools = append(slices.Clone(res.Tools), res.Tools[0])
	return &out, nil
}

// TestDuplicateToolRejected (item 3): a raw name listed twice rejects the listing: at
// startup the attempt fails, on a refresh the previous set stays.
func TestDuplicateToolRejected(t *testing.T) {
	t.Run("startup", func(t *testing.T) {
		e := newEnv(t)
		srv := demo()
		var on atomic.Bool
		on.Store(true)
		listTamper(srv, &on, duplicateFirst)
		cfg := memConfig("srv")
		cfg.FailOnStartupError = true
		s := e.mount(nil, cfg, &hooks{dial: newMemServer(srv).dial})
		ctxtest.RequireState(t, s, ctx.Failed)
		if err := s.Err(); err == nil || !strings.Contains(err.Error(), `mcp server "srv" listed tool "add" more than once: invalid tool list`) {
			t.Fatalf("load error %v", err)
		}
	})
	t.Run("refresh", func(t *testing.T) {
		e := newEnv(t)
		srv := demo()
		var tamper atomic.Bool
		served := listTamper(srv, &tamper, duplicateFirst)
		e.mount(nil, memConfig("srv"), &hooks{dial: newMemServer(srv).dial})
		refreshRefused(t, e, &tamper, served, `listed tool \"add\" more than once`)
	})
}

// TestFailedRefreshKeepsPrevious (item 3): a tools/list error keeps the previous set; the
// next successful refresh swaps in the new list as one change.
func TestFailedRefreshKeepsPrevious(t *testing.T) {
	e := newEnv(t)
	srv := demo()
	var failing atomic.Bool
	served := listTamper(srv, &failing, func(*mcp.ListToolsResult) (*mcp.ListToolsResult, error) {
		return nil, errors.New("listing is broken (test)")
	})
	e.mount(nil, memConfig("srv"), &hooks{dial: newMemServer(srv).dial})
	refreshRefused(t, e, &failing, served, "listing is broken (test)")
}

// TestRepeatedCursorRejected (item 2): a server whose cursors loop is refused instead of
// followed for ever.
func TestRepeatedCursorRejected(t *testing.T) {
	e := newEnv(t)
	srv := demo()
	srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(cx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method != "tools/list" {
				return next(cx, method, req)
			}
			// Every page, the first included, points at the same next page.
			return &mcp.ListToolsResult{Tools: []*mcp.Tool{{Name: "t", InputSchema: map[string]any{"type": "object"}}}, NextCursor: "again"}, nil
		}
	})
	cfg := memConfig("srv")
	cfg.FailOnStartupError = true
	s := e.mount(nil, cfg, &hooks{dial: newMemServer(srv).dial})
	if err := s.Err(); err == nil || !strings.Contains(err.Error(), `repeated the cursor "again"`) {
		t.Fatalf("load error %v", err)
	}
}

// TestListChangedRefresh (item 3): tools/list_changed brings new tools in one atomic swap.
func TestListChangedRefresh(t *testing.T) {
	for _, protocol := range []string{"", ProtocolAuto} {
		t.Run("protocol="+protocol, func(t *testing.T) {
			e := newEnv(t)
			cfg := memConfig("srv")
			cfg.ProtocolVersion = protocol
			e.mount(nil, cfg, &hooks{dial: newMemServer(demo()).dial})
			changed := ctxtest.Record(t, e.root, toolregistry.Changed)
			e.mustCall(nil, "mcp__srv__add_tool", `{"name":"late"}`)
			ev := changed.WaitFor(t, func(ch []toolregistry.Change) bool { return len(ch) > 0 })
			if !slices.Equal(ev[0].Added, []string{"mcp__srv__extra_late"}) {
				t.Errorf("change %+v", ev[0])
			}
			e.mustCall(nil, "mcp__srv__extra_late", `{}`)
			st := e.st.waitFor(t, "srv", "connected with the new tool", func(s Status) bool {
				return slices.Contains(s.Tools, "mcp__srv__extra_late")
			})
			if st.Phase != PhaseConnected {
				t.Errorf("status %+v", st)
			}
		})
	}
}

// TestListChangedStorm (item 3): 1,000 notifications cause a handful of re-lists, counted
// on the server.
func TestListChangedStorm(t *testing.T) {
	e := newEnv(t)
	srv, ctl := mcptest.NewControlled("srv")
	s := e.mount(nil, memConfig("srv"), &hooks{dial: newMemServer(srv).dial})
	changed := ctxtest.Record(t, e.root, toolregistry.Changed)
	stormed := e.mustCall(nil, "mcp__srv__storm", `{"n":1000}`).Text()
	changed.WaitFor(t, func(ch []toolregistry.Change) bool {
		return len(ch) > 0 && slices.Contains(ch[0].Added, "mcp__srv__"+stormed)
	})
	must(t, s.Dispose(ctxtest.Wait(t))) // no refresh can run after this
	if n := ctl.Stats().Lists - 1; n < 1 || n > 3 {
		t.Errorf("%d re-lists for 1000 notifications", n)
	}
}

// TestCalls (item 4): the registry validates arguments before anything is sent; isError
// becomes a tool error with the server's text.
func TestCalls(t *testing.T) {
	e := newEnv(t)
	srv := demo()
	calls := countRequests(srv, "tools/call")
	e.mount(nil, memConfig("srv"), &hooks{dial: newMemServer(srv).dial})
	if _, err := e.call(nil, "mcp__srv__echo", `{"text":5}`); !errors.Is(err, toolregistry.ErrInvalidArgs) {
		t.Errorf("bad args: %v", err)
	}
	if calls.Load() != 0 {
		t.Errorf("invalid arguments reached the server")
	}
	res, err := e.call(nil, "mcp__srv__fail", `{"message":"disk on fire"}`)
	if !errors.Is(err, toolregistry.ErrToolError) || !strings.Contains(err.Error(), "disk on fire") || !res.IsError ||
		!strings.Contains(res.Text(), "disk on fire") || !strings.Contains(string(res.Raw), `"isError":true`) {
		t.Errorf("fail: %v / %+v", err, res)
	}
	if got := e.mustCall(nil, "mcp__srv__add", `{"a":2,"b":3}`); string(got.Structured) != `{"sum":5}` || got.Text() != "5" {
		t.Errorf("add: %+v", got)
	}
}

// cancelWatch signals when srv receives notifications/cancelled and when a block call
// starts.
func cancelWatch(srv *mcp.Server) (started, cancelled chan struct{}) {
	started, cancelled = make(chan struct{}, 8), make(chan struct{}, 8)
	srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(cx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			switch p := req.GetParams().(type) {
			case *mcp.CallToolParamsRaw:
				if p.Name == "block" {
					started <- struct{}{}
				}
			case *mcp.CancelledParams:
				cancelled <- struct{}{}
			}
			return next(cx, method, req)
		}
	})
	return started, cancelled
}

func recv(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(ctxtest.Timeout):
		t.Fatalf("no %s", what)
	}
}

// TestCallTimeoutAndCancellation (item 4): toolCallTimeoutMs bounds a call, and both the
// timeout and the caller's cancellation reach the server as notifications/cancelled.
func TestCallTimeoutAndCancellation(t *testing.T) {
	e := newEnv(t)
	srv := mcptest.NewServer("srv")
	started, cancelled := cancelWatch(srv)
	cfg := memConfig("srv")
	cfg.ToolCallTimeoutMs = 50
	e.mount(nil, cfg, &hooks{dial: newMemServer(srv).dial})

	_, err := e.call(nil, "mcp__srv__block", `{}`)
	if !errors.Is(err, toolregistry.ErrTimeout) {
		t.Fatalf("timeout: %v", err)
	}
	recv(t, cancelled, "notifications/cancelled after the timeout")

	cx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := e.reg.Execute(cx, e.root, "mcp__srv__block", json.RawMessage(`{}`), toolregistry.ExecOptions{})
		done <- err
	}()
	<-started // the first call's
	recv(t, started, "the second call")
	cancel()
	if err := <-done; !errors.Is(err, toolregistry.ErrCancelled) {
		t.Fatalf("cancelled call: %v", err)
	}
	recv(t, cancelled, "notifications/cancelled after the caller cancelled")
}

// TestSquatterKeepsItsTool: a foreign registration of one of the server's public names makes
// the whole tool set fail to register (all or nothing): a strict startup fails, otherwise
// the client stays connected with the failure in its status; the squatter keeps its tool.
func TestSquatterKeepsItsTool(t *testing.T) {
	for _, strict := range []bool{true, false} {
		e := newEnv(t)
		squatter := ctx.Define(ctx.Meta{Name: "squatter", Inject: []ctx.Dependency{toolregistry.Key}}, func(c *ctx.Context, _ struct{}) error {
			_, err := toolregistry.Key.Use(c).Register(c, toolregistry.Tool{Name: "mcp__srv__echo",
				Execute: func(context.Context, *toolregistry.Call) (*toolregistry.Result, error) {
					return toolregistry.TextResult("squatter"), nil
				}})
			return err
		})
		ctxtest.MountActive(t, e.root, squatter, nil)
		cfg := memConfig("srv")
		cfg.FailOnStartupError = strict
		s := e.mount(nil, cfg, &hooks{dial: newMemServer(demo()).dial})
		if strict {
			ctxtest.RequireState(t, s, ctx.Failed)
			if err := s.Err(); err == nil || !strings.Contains(err.Error(), "tool registration failed") {
				t.Errorf("strict: %v", err)
			}
		} else {
			ctxtest.RequireState(t, s, ctx.Active)
			if st := e.st.waitPhase(t, "srv", PhaseConnected); !strings.Contains(st.Err, "tool registration failed") || len(st.Tools) != 0 {
				t.Errorf("status %+v", st)
			}
		}
		if got := e.mustCall(nil, "mcp__srv__echo", `{}`).Text(); got != "squatter" {
			t.Errorf("squatter's tool answered %q", got)
		}
		if _, ok := e.reg.Lookup(e.root, "mcp__srv__add"); ok {
			t.Error("part of the server's tools registered")
		}
	}
}

// TestAppToolMetaRaw: a tool's MCP App _meta is kept as the server sent it (MetaUI), for a
// gateway that passes it on: the "ui" object with every key, and the deprecated flat key.
func TestAppToolMetaRaw(t *testing.T) {
	e := newEnv(t)
	srv := bareServer()
	ok := func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return textResult("ok"), nil }
	rawTool(srv, &mcp.Tool{Name: "show", Meta: mcp.Meta{"other": 1, "ui/resourceUri": "ui://demo/view.html",
		"ui": map[string]any{"resourceUri": "ui://demo/view.html", "visibility": []any{"model", "app"}, "future": "kept"}}}, ok)
	e.mount(nil, memConfig("srv"), &hooks{dial: newMemServer(srv).dial})
	info, found := e.reg.Lookup(e.root, "mcp__srv__show")
	if !found {
		t.Fatal("show: not registered")
	}
	const want = `{"ui":{"future":"kept","resourceUri":"ui://demo/view.html","visibility":["model","app"]},"ui/resourceUri":"ui://demo/view.html"}`
	if got := info.Meta[MetaUI]; got != want {
		t.Errorf("MetaUI %s, want %s", got, want)
	}
}
