//go:build unix

package mcpclient

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/plugins/toolregistry"
	"github.com/cordisgo/harness/testkit/benchtest"

	"github.com/cordisgo/harness/testkit/mcptest"
)

// The performance bar: a trivial tool (echo) called (a) with a raw go-sdk
// ClientSession.CallTool and (b) through the tool registry and this plugin, against the same
// server, in memory and over stdio. Run side by side:
//
//	go test -run '^$' -bench 'BenchmarkCall' -benchmem ./plugins/mcpclient

var benchArgs = json.RawMessage(`{"text":"hello"}`)

// benchServer returns the in-memory server of a benchmark: the demo server.
func benchServer() *mcp.Server { return demo() }

// rawSession connects a plain go-sdk client over t, as an SDK user would (same protocol
// version and capabilities as the plugin, so both sessions are alike).
func rawSession(b *testing.B, t mcp.Transport) *mcp.ClientSession {
	b.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "0"}, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}})
	cs, err := c.Connect(context.Background(), t, &mcp.ClientSessionOptions{ProtocolVersion: DefaultStdioProtocolVersion})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = cs.Close() })
	return cs
}

// processCPU returns the CPU time this process has used. Wall time on a shared machine is
// noisy; the CPU time per call is what the plugin adds to (for stdio, the server's CPU is
// another process's and is not counted).
func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// measure runs call b.N times, reporting allocations and CPU time per call.
func measure(b *testing.B, call func()) {
	b.ReportAllocs()
	b.ResetTimer()
	start := processCPU()
	for b.Loop() {
		call()
	}
	b.ReportMetric(float64(processCPU()-start)/float64(b.N), "cpu-ns/op")
}

func benchRaw(b *testing.B, cs *mcp.ClientSession) {
	cx := context.Background()
	measure(b, func() {
		res, err := cs.CallTool(cx, &mcp.CallToolParams{Name: "echo", Arguments: benchArgs})
		if err != nil || res.IsError {
			b.Fatal(err, res)
		}
	})
}

// pluginTree mounts the registry and the client with cfg (and hooks) on a fresh root.
func pluginTree(b testing.TB, cfg Config, h *hooks) (*ctx.Context, *toolregistry.Registry) {
	b.Helper()
	root := ctx.New(ctx.Options{Logger: slog.New(slog.DiscardHandler)})
	b.Cleanup(func() { _ = root.Scope().Dispose(context.Background()) })
	if _, err := root.Plugin(toolregistry.Plugin, nil); err != nil {
		b.Fatal(err)
	}
	c := root
	if h != nil {
		c = root.With(hooksKey{}, h)
	}
	s, err := c.Plugin(Plugin, cfg)
	if err != nil {
		b.Fatal(err)
	}
	if err := root.Settle(context.Background()); err != nil || s.State() != ctx.Active {
		b.Fatalf("client %v: %v", s.State(), s.Err())
	}
	reg, _ := toolregistry.Key.Get(root)
	return root, reg
}

func benchPlugin(b *testing.B, root *ctx.Context, reg *toolregistry.Registry, tool string) {
	if _, ok := reg.Lookup(root, tool); !ok {
		b.Fatalf("no tool %s", tool)
	}
	measure(b, func() {
		res, err := reg.Execute(root, root, tool, benchArgs, toolregistry.ExecOptions{})
		if err != nil || res.Text() != "hello" {
			b.Fatal(err, res)
		}
	})
}

func BenchmarkCallRawSDK(b *testing.B) {
	b.Run("in-memory", func(b *testing.B) {
		srv := benchServer()
		st, ct := mcp.NewInMemoryTransports()
		ss, err := srv.Connect(context.Background(), st, nil)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = ss.Wait() })
		benchRaw(b, rawSession(b, ct))
	})
	b.Run("stdio", func(b *testing.B) {
		exe, env := mcptest.Stdio(b, mcptest.Normal, "bench")
		cmd := exec.Command(exe)
		cmd.Env = os.Environ()
		for k, v := range env {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
		benchRaw(b, rawSession(b, &mcp.CommandTransport{Command: cmd}))
	})
}

func BenchmarkCallPlugin(b *testing.B) {
	b.Run("in-memory", func(b *testing.B) {
		root, reg := pluginTree(b, memConfig("bench"), &hooks{dial: newMemServer(benchServer()).dial})
		benchPlugin(b, root, reg, "mcp__bench__echo")
	})
	b.Run("stdio", func(b *testing.B) {
		cfg := stdioConfig(b, "normal")
		cfg.ServerName = "bench"
		root, reg := pluginTree(b, cfg, nil)
		benchPlugin(b, root, reg, "mcp__bench__echo")
	})
}

// BenchmarkCallPaired alternates a raw CallTool and a call through the registry and the
// plugin on the same session, timing each, so that both see the same load: on a shared
// machine this is the fairest measure of the plugin's overhead. It reports the median of
// each kind of call, the overhead in percent of the raw call, and the process's CPU time
// per call of each kind (for stdio: the client's; the server is another process).
func BenchmarkCallPaired(b *testing.B) {
	run := func(b *testing.B, cfg Config, h *hooks) {
		var sup *supervisor
		if h == nil {
			h = &hooks{}
		}
		h.observe = func(s *supervisor) { sup = s }
		root, reg := pluginTree(b, cfg, h)
		tool := "mcp__" + cfg.ServerName + "__echo"
		cs := sup.live.Load().conn.Session()
		cx := context.Background()
		rawCall := func() time.Duration {
			t0 := time.Now()
			if _, err := cs.CallTool(cx, &mcp.CallToolParams{Name: "echo", Arguments: benchArgs}); err != nil {
				b.Fatal(err)
			}
			return time.Since(t0)
		}
		pluginCall := func() time.Duration {
			t0 := time.Now()
			if res, err := reg.Execute(root, root, tool, benchArgs, toolregistry.ExecOptions{}); err != nil || res.Text() != "hello" {
				b.Fatal(err, res)
			}
			return time.Since(t0)
		}
		var raw, plugin []time.Duration
		var rawCPU, pluginCPU time.Duration
		timed := func(call func() time.Duration, into *[]time.Duration, cpu *time.Duration) {
			c0 := processCPU()
			*into = append(*into, call())
			*cpu += processCPU() - c0
		}
		b.ResetTimer()
		benchtest.Alternate(b, func() { timed(rawCall, &raw, &rawCPU) }, func() { timed(pluginCall, &plugin, &pluginCPU) })
		r, p := benchtest.Median(raw), benchtest.Median(plugin)
		b.ReportMetric(float64(r), "raw-ns/call")
		b.ReportMetric(float64(p), "plugin-ns/call")
		b.ReportMetric(100*float64(p-r)/float64(r), "overhead-%")
		b.ReportMetric(float64(rawCPU)/float64(len(raw)), "raw-cpu-ns/call")
		b.ReportMetric(float64(pluginCPU)/float64(len(plugin)), "plugin-cpu-ns/call")
	}
	b.Run("in-memory", func(b *testing.B) {
		run(b, memConfig("bench"), &hooks{dial: newMemServer(benchServer()).dial})
	})
	b.Run("stdio", func(b *testing.B) {
		cfg := stdioConfig(b, "normal")
		cfg.ServerName = "bench"
		run(b, cfg, nil)
	})
}

// BenchmarkPluginPath is everything a plugin call adds to the round trip, without the round
// trip: the registry pipeline (lookup, argument validation against echo's schema, policy,
// timeout, recording) around the plugin's own code (binding the call to its connection,
// adapting a canned echo result). Compare it with the raw round trip above.
func BenchmarkPluginPath(b *testing.B) {
	root, reg := pluginTree(b, memConfig("bench"), &hooks{dial: newMemServer(benchServer()).dial})
	info, _ := reg.Lookup(root, "mcp__bench__echo")
	res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hello"}}}
	g := newGeneration()
	defer g.end()
	_, err := reg.Register(root.Layered(), toolregistry.Tool{Name: "local_echo", Parameters: info.Parameters,
		Execute: func(cx context.Context, call *toolregistry.Call) (*toolregistry.Result, error) {
			g.track(call)
			g.untrack(call)
			return AdaptResult("echo", res, call.Attachments, defaultMaxOutputBytes), nil
		}})
	if err != nil {
		b.Fatal(err)
	}
	b.Run("registry+plugin", func(b *testing.B) {
		measure(b, func() {
			if _, err := reg.Execute(root, root, "local_echo", benchArgs, toolregistry.ExecOptions{}); err != nil {
				b.Fatal(err)
			}
		})
	})
	b.Run("plugin-only", func(b *testing.B) {
		call := &toolregistry.Call{}
		measure(b, func() {
			g.track(call)
			g.untrack(call)
			AdaptResult("echo", res, nil, defaultMaxOutputBytes)
		})
	})
}
