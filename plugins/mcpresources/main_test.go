package mcpresources_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/ctx/ctxtest"
	"github.com/cordisgo/harness/internal/demoserver"
	"github.com/cordisgo/harness/plugins/mcpresources"
	"github.com/cordisgo/harness/plugins/sysprompt"
	"github.com/cordisgo/harness/plugins/toolregistry"
	"github.com/cordisgo/harness/testkit/mcptest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// sharedTools are the names of the three tools, sorted.
var sharedTools = []string{mcpresources.ToolTemplates, mcpresources.ToolList, mcpresources.ToolRead}

// env is a tree with the tools service and the resources service mounted at the root, and
// optionally the prompt service.
type env struct {
	root      *ctx.Context
	reg       *toolregistry.Registry
	svc       *mcpresources.Service
	resources *ctx.Scope // the mcpresources plugin's scope
	prompt    *sysprompt.Service
	log       *ctxtest.Log
}

func newEnv(t *testing.T, withPrompt bool) *env {
	t.Helper()
	root, log := ctxtest.NewLogged(t)
	ctxtest.Mount(t, root, toolregistry.Plugin, nil)
	if withPrompt {
		ctxtest.Mount(t, root, sysprompt.Plugin, nil)
	}
	e := &env{root: root, resources: ctxtest.Mount(t, root, mcpresources.Plugin, nil), log: log}
	ctxtest.Settle(t, root)
	ctxtest.RequireState(t, e.resources, ctx.Active)
	var ok bool
	if e.reg, ok = toolregistry.Key.Get(root); !ok {
		t.Fatal("tools service not provided")
	}
	if e.svc, ok = mcpresources.Key.Get(root); !ok {
		t.Fatal("mcpResources service not provided")
	}
	if withPrompt {
		if e.prompt, ok = sysprompt.Key.Get(root); !ok {
			t.Fatal("systemPrompt service not provided")
		}
	}
	return e
}

// call executes tool from c with JSON arguments.
// register registers p as server's provider in the root's layer, failing the test if it is
// refused.
func (e *env) register(t *testing.T, server string, p mcpresources.Provider) ctx.Disposer {
	t.Helper()
	d, err := e.svc.Register(e.root, server, p)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func (e *env) call(t *testing.T, c *ctx.Context, tool, args string) (*toolregistry.Result, error) {
	t.Helper()
	res, err := e.reg.Execute(ctxtest.Wait(t), c, tool, json.RawMessage(args), toolregistry.ExecOptions{})
	if res == nil {
		t.Fatalf("Execute(%s) returned a nil result (err %v)", tool, err)
	}
	return res, err
}

// mustCall executes tool and fails the test on a tool error.
func (e *env) mustCall(t *testing.T, c *ctx.Context, tool, args string) *toolregistry.Result {
	t.Helper()
	res, err := e.call(t, c, tool, args)
	if err != nil {
		t.Fatalf("%s %s: %v", tool, args, err)
	}
	return res
}

// toolsFrom returns the names of the shared tools visible from c, sorted.
func (e *env) toolsFrom(c *ctx.Context) []string {
	var out []string
	for _, in := range e.reg.List(c) {
		if slices.Contains(sharedTools, in.Name) {
			out = append(out, in.Name)
		}
	}
	return out
}

// requireTools fails unless exactly the shared tools (want) or none (!want) are visible
// from c.
func (e *env) requireTools(t *testing.T, c *ctx.Context, want bool) {
	t.Helper()
	got := e.toolsFrom(c)
	switch {
	case want && !slices.Equal(got, sharedTools):
		t.Fatalf("tools visible from %s: %v, want %v", c.Scope(), got, sharedTools)
	case !want && len(got) > 0:
		t.Fatalf("tools visible from %s: %v, want none", c.Scope(), got)
	}
}

// server defines a plugin that registers p as server through its own context, the way the
// MCP client does.
func server(name string, p mcpresources.Provider) ctx.PluginDef {
	return ctx.Define(ctx.Meta{Name: "server-" + name, Inject: []ctx.Dependency{mcpresources.Key}},
		func(c *ctx.Context, _ struct{}) error {
			_, err := mcpresources.Key.Use(c).Register(c, name, p)
			return err
		})
}

// active returns the current context of s, failing unless it is active.
func active(t *testing.T, s *ctx.Scope) *ctx.Context {
	t.Helper()
	ctxtest.RequireState(t, s, ctx.Active)
	return s.Context()
}

// dispose disposes d, failing the test on an error.
func dispose(t *testing.T, d ctx.Disposer) {
	t.Helper()
	if err := d(ctxtest.Wait(t)); err != nil {
		t.Fatalf("dispose: %v", err)
	}
}

// demoProvider is a Provider over a real go-sdk client session, connected in memory to the
// embedded demo server (page size 2). It records every request it receives.
type demoProvider struct {
	cs    *mcp.ClientSession
	calls atomic.Int64

	mu      sync.Mutex
	reqs    []mcpresources.Request
	callers []mcpresources.CallerInfo
	last    json.RawMessage
}

func connectDemo(t *testing.T) *demoProvider {
	t.Helper()
	cx := ctxtest.Wait(t)
	ct := mcptest.InMemory(t, demoserver.New(demoserver.Options{PageSize: 2}))
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "mcpresources-test", Version: "0"}, nil).Connect(cx, ct, nil)
	if err != nil {
		t.Fatalf("client connect: %v", err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return &demoProvider{cs: cs}
}

func (p *demoProvider) Request(cx context.Context, req mcpresources.Request, caller mcpresources.CallerInfo) (json.RawMessage, error) {
	p.calls.Add(1)
	p.mu.Lock()
	p.reqs = append(p.reqs, req)
	p.callers = append(p.callers, caller)
	p.mu.Unlock()
	var (
		res any
		err error
	)
	switch req.Method {
	case mcpresources.MethodList:
		res, err = p.cs.ListResources(cx, &mcp.ListResourcesParams{Cursor: req.Cursor})
	case mcpresources.MethodTemplates:
		res, err = p.cs.ListResourceTemplates(cx, &mcp.ListResourceTemplatesParams{Cursor: req.Cursor})
	case mcpresources.MethodRead:
		res, err = p.cs.ReadResource(cx, &mcp.ReadResourceParams{URI: req.URI})
	default:
		return nil, fmt.Errorf("unsupported method %q", req.Method)
	}
	if err != nil {
		return nil, err
	}
	raw, err := json.Marshal(res)
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	p.last = raw
	p.mu.Unlock()
	return raw, nil
}

// requests returns the requests received so far.
func (p *demoProvider) requests() []mcpresources.Request {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.reqs)
}

// lastResult returns the last result returned.
func (p *demoProvider) lastResult() json.RawMessage {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.last
}

// tagProvider answers every request with one resource naming its tag, so that a test can
// tell which provider a call reached; err, when set, fails every request instead.
type tagProvider struct {
	tag   string
	err   error
	calls atomic.Int64
}

func (p *tagProvider) Request(_ context.Context, req mcpresources.Request, _ mcpresources.CallerInfo) (json.RawMessage, error) {
	p.calls.Add(1)
	if p.err != nil {
		return nil, p.err
	}
	return json.RawMessage(fmt.Sprintf(`{"resources":[{"uri":"tag://%s","name":%q}],"method":%q}`, p.tag, p.tag, req.Method)), nil
}

// answeredBy calls list_mcp_resources for server from c and returns the tag that answered.
func (e *env) answeredBy(t *testing.T, c *ctx.Context, server string) string {
	t.Helper()
	res := e.mustCall(t, c, mcpresources.ToolList, `{"server":"`+server+`"}`)
	var out struct {
		Resources []struct{ Name string } `json:"resources"`
	}
	if err := json.Unmarshal(res.Structured, &out); err != nil || len(out.Resources) != 1 {
		t.Fatalf("unexpected result %s (%v)", res.Structured, err)
	}
	return out.Resources[0].Name
}

// toolError returns err as a *toolregistry.ToolError, failing the test otherwise.
func toolError(t *testing.T, err error) *toolregistry.ToolError {
	t.Helper()
	var te *toolregistry.ToolError
	if !errors.As(err, &te) {
		t.Fatalf("error %v (%T) is not a tool error", err, err)
	}
	return te
}

// rawProvider answers every request with the same bytes.
type rawProvider string

func (p rawProvider) Request(context.Context, mcpresources.Request, mcpresources.CallerInfo) (json.RawMessage, error) {
	return json.RawMessage(p), nil
}
