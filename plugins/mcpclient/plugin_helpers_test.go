package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/ctx/ctxtest"
	"github.com/cordisgo/harness/internal/demoserver"
	"github.com/cordisgo/harness/plugins/toolregistry"
)

// statusLog records every status report (StatusEvent, which carries what the sink gets).
type statusLog struct{ rec *ctxtest.Recorder[Status] }

func recordStatus(t *testing.T, c *ctx.Context) *statusLog {
	return &statusLog{rec: ctxtest.Record(t, c, StatusEvent)}
}

func (l *statusLog) all() []Status { return l.rec.Events() }

// phases returns the phases reported for server.
func (l *statusLog) phases(server string) []Phase { return phasesOf(l.all(), server) }

func phasesOf(all []Status, server string) []Phase {
	var out []Phase
	for _, s := range all {
		if s.Server == server {
			out = append(out, s.Phase)
		}
	}
	return out
}

// last returns the last report of server in all.
func last(all []Status, server string) (Status, bool) {
	for i := len(all) - 1; i >= 0; i-- {
		if all[i].Server == server {
			return all[i], true
		}
	}
	return Status{}, false
}

// waitFor waits until pred holds for the last report of server and returns that report.
func (l *statusLog) waitFor(t *testing.T, server string, what string, pred func(Status) bool) Status {
	t.Helper()
	all := l.rec.WaitFor(t, func(all []Status) bool {
		st, ok := last(all, server)
		return ok && pred(st)
	})
	st, _ := last(all, server)
	return st
}

func (l *statusLog) waitPhase(t *testing.T, server string, p Phase) Status {
	t.Helper()
	return l.waitFor(t, server, string(p), func(s Status) bool { return s.Phase == p })
}

// memServer serves every generation a fresh in-memory session of one go-sdk server.
type memServer struct {
	srv      *mcp.Server
	dials    atomic.Int32
	failNext atomic.Int32 // dials to fail before serving again
	closeErr error        // returned by every connection's Close
	open     atomic.Int32 // connections not closed yet
	overlap  atomic.Bool  // a dial happened while another connection was open

	mu       sync.Mutex
	sessions []*mcp.ServerSession
	dialed   []time.Time // when each dial began
}

func newMemServer(srv *mcp.Server) *memServer { return &memServer{srv: srv} }

func (m *memServer) dial(cx context.Context, cfg Config, opts dialOptions) (*connection, error) {
	m.dials.Add(1)
	m.mu.Lock()
	m.dialed = append(m.dialed, time.Now())
	m.mu.Unlock()
	if m.failNext.Load() > 0 {
		m.failNext.Add(-1)
		return nil, connectError(cfg.ServerName, errors.New("connection refused (test)"), "")
	}
	if err := cx.Err(); err != nil {
		return nil, connectError(cfg.ServerName, context.Cause(cx), "")
	}
	st, ct := mcp.NewInMemoryTransports()
	ss, err := m.srv.Connect(cx, st, nil)
	if err != nil {
		return nil, connectError(cfg.ServerName, err, "")
	}
	cs, err := connectSession(cx, cfg, opts, opts.shim(ct))
	if err != nil {
		_ = ss.Close()
		return nil, connectError(cfg.ServerName, err, "")
	}
	m.mu.Lock()
	m.sessions = append(m.sessions, ss)
	m.mu.Unlock()
	if m.open.Add(1) > 1 {
		m.overlap.Store(true)
	}
	closeErr := m.closeErr
	return newConnection(cfg, "in-memory", cs, func(context.Context) error {
		_ = cs.Close()
		_ = ss.Wait()
		m.open.Add(-1)
		return closeErr
	}), nil
}

// dialTimes returns when each dial began (in a synctest bubble: the bubble's clock).
func (m *memServer) dialTimes() []time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.dialed)
}

// crash ends the newest server session, as a dying server would.
func (m *memServer) crash() {
	m.mu.Lock()
	ss := m.sessions[len(m.sessions)-1]
	m.mu.Unlock()
	_ = ss.Close()
}

// env is a tree with the tool registry and a status recorder.
type env struct {
	t    *testing.T
	root *ctx.Context
	log  *ctxtest.Log
	reg  *toolregistry.Registry
	st   *statusLog
}

func newEnv(t *testing.T) *env {
	t.Helper()
	root, log := ctxtest.NewLogged(t)
	ctxtest.MountActive(t, root, toolregistry.Plugin, nil)
	reg, ok := toolregistry.Key.Get(root)
	if !ok {
		t.Fatal("no tools service")
	}
	return &env{t: t, root: root, log: log, reg: reg, st: recordStatus(t, root)}
}

// mount mounts the client with cfg on c (the root when nil) and hooks, and waits for its
// activation.
func (e *env) mount(c *ctx.Context, cfg Config, h *hooks) *ctx.Scope {
	e.t.Helper()
	if c == nil {
		c = e.root
	}
	if h != nil {
		c = c.With(hooksKey{}, h)
	}
	s := ctxtest.Mount(e.t, c, Plugin, cfg)
	if err := s.Wait(ctxtest.Wait(e.t)); err != nil {
		e.t.Logf("load error: %v", err)
	}
	return s
}

// call executes a tool from c (the root when nil).
func (e *env) call(c *ctx.Context, name, args string) (*toolregistry.Result, error) {
	e.t.Helper()
	if c == nil {
		c = e.root
	}
	var raw json.RawMessage
	if args != "" {
		raw = json.RawMessage(args)
	}
	return e.reg.Execute(c, c, name, raw, toolregistry.ExecOptions{})
}

// mustCall executes a tool and fails the test on error.
func (e *env) mustCall(c *ctx.Context, name, args string) *toolregistry.Result {
	e.t.Helper()
	res, err := e.call(c, name, args)
	if err != nil {
		e.t.Fatalf("%s(%s): %v", name, args, err)
	}
	return res
}

// names lists the tools visible from c (the root when nil).
func (e *env) names(c *ctx.Context) []string {
	if c == nil {
		c = e.root
	}
	var out []string
	for _, in := range e.reg.List(c) {
		out = append(out, in.Name)
	}
	return out
}

// memConfig is a valid configuration for the in-memory dialer.
func memConfig(server string) Config {
	c := memoryConfig("")
	c.ServerName = server
	return c
}

func demo() *mcp.Server { return demoserver.New(demoserver.Options{}) }

// countRequests counts the requests of a method (tools/list, tools/call, …) a server
// receives.
func countRequests(srv *mcp.Server, of string) *atomic.Int32 {
	var n atomic.Int32
	srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(cx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == of {
				n.Add(1)
			}
			return next(cx, method, req)
		}
	})
	return &n
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

var _ = fmt.Sprint
