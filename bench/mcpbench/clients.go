package mcpbench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/plugins/mcpclient"
	"github.com/cordisgo/harness/plugins/toolregistry"
)

// Protocol is the MCP protocol version every client of the comparison speaks: what the
// harness pins for stdio servers and the TypeScript SDK's newest.
const Protocol = mcpclient.DefaultStdioProtocolVersion

// EchoText is the argument of every benchmarked call; the server sends it back.
const EchoText = "hello"

// Server is how to start the stdio server: a command, its arguments and extra environment
// variables (on top of what each client passes by default).
type Server struct {
	Command string
	Args    []string
	Env     map[string]string
}

// HarnessServer is the demo server of the harness binary at path.
func HarnessServer(path string) Server {
	return Server{Command: path, Args: []string{"demo-server"}}
}

// Client makes the benchmarked call, echo("hello"), and checks the answer.
type Client interface {
	// Call makes one call; it is safe for concurrent use.
	Call(cx context.Context) error
	// Protocol is the protocol version the session negotiated.
	Protocol() string
	// Close ends the session and the server.
	Close() error
}

// Names of the clients. ClientHarness and ClientHarnessGoGC are the same host; the first
// runs with the harness binary's runtime policies (internal/gcpolicy for the garbage
// collector, internal/procpolicy for GOMAXPROCS), as the binary does, the second with Go's
// defaults, as the bare go-sdk client does. The command applies the policies; Dial connects
// either the same way.
const (
	ClientHarness     = "harness"
	ClientHarnessGoGC = "harness-gogc100"
	ClientGoSDK       = "gosdk"
	ClientTS          = "ts"
)

// Dial connects the named Go client (ClientHarness, ClientHarnessGoGC or ClientGoSDK) to
// srv.
func Dial(cx context.Context, name string, srv Server) (Client, error) {
	switch name {
	case ClientHarness, ClientHarnessGoGC:
		return DialHarness(cx, srv, nil)
	case ClientGoSDK:
		return DialGoSDK(cx, srv)
	}
	return nil, fmt.Errorf("mcpbench: unknown Go client %q (want %s, %s or %s)", name, ClientHarness, ClientHarnessGoGC, ClientGoSDK)
}

// Logger is the logger of the hosts built here: warnings and errors to stderr.
func Logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

// ServerConfig is the mcpclient configuration of srv under the local name server: the
// defaults, with a failed first connection failing the mount.
func ServerConfig(server string, srv Server) mcpclient.Config {
	var cfg mcpclient.Config
	cfg.Default()
	cfg.ServerName = server
	cfg.Transport = mcpclient.TransportStdio
	cfg.Command = srv.Command
	cfg.Args = srv.Args
	cfg.Env = srv.Env
	cfg.FailOnStartupError = true
	return cfg
}

// Host is a scope tree with the tool registry mounted: what a harness process runs.
type Host struct {
	Root     *ctx.Context
	Registry *toolregistry.Registry
}

// NewHost creates a root and mounts the tool registry on it with its default options.
func NewHost(cx context.Context, logger *slog.Logger) (*Host, error) {
	return NewHostWith(cx, logger, nil)
}

// NewHostWith is NewHost with the registry's options (nil: the defaults).
func NewHostWith(cx context.Context, logger *slog.Logger, opts *toolregistry.Config) (*Host, error) {
	root := ctx.New(ctx.Options{Logger: logger})
	var cfg any
	if opts != nil {
		cfg = *opts
	}
	s, err := root.Plugin(toolregistry.Plugin, cfg)
	if err == nil {
		err = s.Wait(cx)
	}
	if err != nil {
		_ = root.Scope().Dispose(context.WithoutCancel(cx))
		return nil, fmt.Errorf("mounting the tool registry: %w", err)
	}
	reg, ok := toolregistry.Key.Get(root)
	if !ok {
		_ = root.Scope().Dispose(context.WithoutCancel(cx))
		return nil, errors.New("mcpbench: the tool registry provides no tools service")
	}
	return &Host{Root: root, Registry: reg}, nil
}

// Mount mounts one mcpclient row for srv under the local name server and returns its scope
// without waiting for it.
func (h *Host) Mount(server string, srv Server) (*ctx.Scope, error) {
	return h.Root.Plugin(mcpclient.Plugin, ServerConfig(server, srv))
}

// Ready waits for s (a mounted mcpclient row) to finish loading and checks that the echo
// tool of server is registered.
func (h *Host) Ready(cx context.Context, s *ctx.Scope, server string) error {
	if err := s.Wait(cx); err != nil {
		return fmt.Errorf("mcp server %q: %w", server, err)
	}
	if st := s.State(); st != ctx.Active {
		return fmt.Errorf("mcp server %q: scope is %v, not active (%w)", server, st, s.Err())
	}
	if _, ok := h.Registry.Lookup(h.Root, EchoTool(server)); !ok {
		return fmt.Errorf("mcp server %q: tool %s is not registered", server, EchoTool(server))
	}
	return nil
}

// Close disposes the tree: every server is shut down and its process group reaped.
func (h *Host) Close() error {
	cx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return h.Root.Scope().Dispose(cx)
}

// EchoTool is the public name of the echo tool of server.
func EchoTool(server string) string { return mcpclient.PublicToolName(server, "echo") }

// Harness is the harness plugin path: Registry.Execute of mcp__demo__echo in a host with
// one mcpclient row.
type Harness struct {
	host *Host
	tool string
	args json.RawMessage
}

// DialHarness builds a host (with the registry options reg; nil: the defaults), mounts srv
// as server "demo" and waits until its tools are registered.
func DialHarness(cx context.Context, srv Server, reg *toolregistry.Config) (*Harness, error) {
	h, err := NewHostWith(cx, Logger(), reg)
	if err != nil {
		return nil, err
	}
	s, err := h.Mount("demo", srv)
	if err == nil {
		err = h.Ready(cx, s, "demo")
	}
	if err != nil {
		_ = h.Close()
		return nil, err
	}
	args, _ := json.Marshal(map[string]string{"text": EchoText})
	return &Harness{host: h, tool: EchoTool("demo"), args: args}, nil
}

// Call implements Client.
func (c *Harness) Call(cx context.Context) error {
	res, err := c.host.Registry.Execute(cx, c.host.Root, c.tool, c.args, toolregistry.ExecOptions{})
	if err != nil {
		return err
	}
	if got := res.Text(); got != EchoText {
		return fmt.Errorf("echo answered %q, want %q", got, EchoText)
	}
	return nil
}

// Protocol implements Client: the harness pins it for stdio.
func (c *Harness) Protocol() string { return Protocol }

// Close implements Client.
func (c *Harness) Close() error { return c.host.Close() }

// GoSDK is a bare go-sdk client session over mcp.CommandTransport.
type GoSDK struct {
	cs *mcp.ClientSession
}

// DialGoSDK starts srv and connects a go-sdk client to it, asking for Protocol, and lists
// its tools once (as every client of the comparison does before calling).
func DialGoSDK(cx context.Context, srv Server) (*GoSDK, error) {
	cmd := exec.Command(srv.Command, srv.Args...)
	if len(srv.Env) > 0 {
		cmd.Env = os.Environ()
		for k, v := range srv.Env {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
	}
	// No client capabilities, as the harness and the TypeScript client advertise none
	// (nil options would offer roots).
	client := mcp.NewClient(&mcp.Implementation{Name: "mcpbench-gosdk", Version: "0.0.0"},
		&mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}})
	cs, err := client.Connect(cx, &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: Protocol})
	if err != nil {
		return nil, fmt.Errorf("go-sdk connect: %w", err)
	}
	if _, err := cs.ListTools(cx, nil); err != nil {
		_ = cs.Close()
		return nil, fmt.Errorf("go-sdk tools/list: %w", err)
	}
	return &GoSDK{cs: cs}, nil
}

// Call implements Client.
func (c *GoSDK) Call(cx context.Context) error {
	res, err := c.cs.CallTool(cx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": EchoText}})
	if err != nil {
		return err
	}
	if res.IsError || len(res.Content) != 1 {
		return fmt.Errorf("echo answered an error or %d blocks", len(res.Content))
	}
	if tc, ok := res.Content[0].(*mcp.TextContent); !ok || tc.Text != EchoText {
		return fmt.Errorf("echo answered %#v, want %q", res.Content[0], EchoText)
	}
	return nil
}

// Protocol implements Client.
func (c *GoSDK) Protocol() string { return c.cs.InitializeResult().ProtocolVersion }

// Close implements Client.
func (c *GoSDK) Close() error {
	err := c.cs.Close()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return nil // the server's exit status on stdin EOF is not the client's concern
	}
	return err
}
