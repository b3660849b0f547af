package mcpclient

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	harnessctx "github.com/cordisgo/harness/ctx"

	"github.com/cordisgo/harness/internal/syncio"
	"github.com/cordisgo/harness/testkit/mcptest"
)

func memoryConfig(protocol string) Config {
	var c Config
	c.Default()
	c.ServerName, c.Transport, c.Command, c.ProtocolVersion = "mem", TransportStdio, "unused", protocol
	return c
}

// dialInMemory connects the client side of this package to srv over an
// in-memory pipe; wire, if non-nil, receives the client's raw JSON-RPC.
func dialInMemory(t *testing.T, srv *mcp.Server, cfg Config, opts dialOptions, wire *syncio.Buffer) (*connection, *mcp.ServerSession) {
	t.Helper()
	cx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	serverT, clientT := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(cx, serverT, nil)
	if err != nil {
		t.Fatal(err)
	}
	var ct mcp.Transport = clientT
	if wire != nil {
		ct = &mcp.LoggingTransport{Transport: clientT, Writer: wire}
	}
	cs, err := connectSession(cx, cfg, opts, ct)
	if err != nil {
		t.Fatal(err)
	}
	conn := newConnection(cfg, "in-memory", cs, func(context.Context) error {
		_ = cs.Close()
		return nil
	})
	t.Cleanup(func() {
		closeConn(t, conn)
		_ = ss.Wait()
	})
	return conn, ss
}

func TestSessionInfoAndProtocol(t *testing.T) {
	tests := []struct{ configured, want string }{
		{"", "2025-11-25"}, // stdio default, pinned
		{"auto", "2026-07-28"},
		{"2025-06-18", "2025-06-18"},
	}
	for _, tt := range tests {
		t.Run("protocol="+tt.configured, func(t *testing.T) {
			conn, _ := dialInMemory(t, mcptest.NewServer(""), memoryConfig(tt.configured), dialOptions{}, nil)
			info := conn.Info()
			if info.ProtocolVersion != tt.want {
				t.Errorf("negotiated %q, want %q", info.ProtocolVersion, tt.want)
			}
			if info.Instructions != "Use echo to repeat text." {
				t.Errorf("instructions %q", info.Instructions)
			}
			if info.Capabilities == nil || info.Capabilities.Tools == nil {
				t.Errorf("tools capability missing: %+v", info.Capabilities)
			}
			if tt.want < "2026-07-28" && (info.ServerName != mcptest.Implementation.Name || info.ServerVersion != mcptest.Implementation.Version) {
				t.Errorf("server info %+v", info)
			}
			if got := callText(t, conn.Session(), "add", map[string]any{"a": 2, "b": 40}); got != "42" {
				t.Errorf("add = %q", got)
			}
		})
	}
}

func TestServerWithoutToolsCapability(t *testing.T) {
	bare := mcp.NewServer(&mcp.Implementation{Name: "bare", Version: "0"}, nil)
	conn, _ := dialInMemory(t, bare, memoryConfig(""), dialOptions{}, nil)
	if caps := conn.Info().Capabilities; caps == nil || caps.Tools != nil {
		t.Fatalf("capabilities = %+v, want non-nil without tools", caps)
	}
}

// TestNoClientCapabilities: the client must not offer roots (the SDK's
// default when Capabilities is nil), sampling or elicitation.
func TestNoClientCapabilities(t *testing.T) {
	for _, protocol := range []string{"", "auto"} {
		t.Run("protocol="+protocol, func(t *testing.T) {
			var wire syncio.Buffer
			_, ss := dialInMemory(t, mcptest.NewServer(""), memoryConfig(protocol), dialOptions{}, &wire)
			for _, capability := range []string{`"roots"`, `"sampling"`, `"elicitation"`} {
				if strings.Contains(wire.String(), capability) {
					t.Errorf("client advertised %s:\n%s", capability, wire.String())
				}
			}
			if protocol == "" {
				// Only the MCP Apps extension, which the host's page renders.
				if !strings.Contains(wire.String(), `"capabilities":{"extensions":{"io.modelcontextprotocol/ui":{"mimeTypes":["text/html;profile=mcp-app"]}}}`) {
					t.Errorf("initialize without the apps extension alone in its capabilities:\n%s", wire.String())
				}
				if caps := ss.InitializeParams().Capabilities; caps.RootsV2 != nil { //nolint:staticcheck // SEP-2577: roots stay for peers on protocol versions that have them (2025-11-25)
					t.Errorf("server saw roots: %+v", caps.RootsV2) //nolint:staticcheck // SEP-2577: roots stay for peers on protocol versions that have them (2025-11-25)
				}
			}
		})
	}
}

func TestToolListChangedSignals(t *testing.T) {
	for _, protocol := range []string{"", "auto"} {
		t.Run("protocol="+protocol, func(t *testing.T) {
			changed := make(chan struct{}, 1)
			signal := func() {
				select {
				case changed <- struct{}{}:
				default:
				}
			}
			srv := mcptest.NewServer("")
			conn, _ := dialInMemory(t, srv, memoryConfig(protocol), dialOptions{onToolListChanged: signal}, nil)
			mcp.AddTool(srv, &mcp.Tool{Name: "late"}, func(context.Context, *mcp.CallToolRequest, map[string]any) (*mcp.CallToolResult, any, error) {
				return textResult("late"), nil, nil
			})
			select {
			case <-changed:
			case <-time.After(10 * time.Second):
				t.Fatal("no tools/list_changed signal")
			}
			if got := callText(t, conn.Session(), "late", map[string]any{"text": "x"}); got != "late" {
				t.Errorf("late = %q", got)
			}
		})
	}
}

func TestDoneWhenServerEndsSession(t *testing.T) {
	conn, ss := dialInMemory(t, mcptest.NewServer(""), memoryConfig(""), dialOptions{}, nil)
	select {
	case <-conn.Done():
		t.Fatal("Done closed while connected")
	default:
	}
	_ = ss.Close()
	select {
	case <-conn.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("Done not closed after the server ended the session")
	}
}

func TestCloseIsIdempotent(t *testing.T) {
	conn, _ := dialInMemory(t, mcptest.NewServer(""), memoryConfig(""), dialOptions{}, nil)
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Go(func() { errs[i] = conn.Close(context.Background()) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("Close #%d: %v", i, err)
		}
	}
	select {
	case <-conn.Done():
	default:
		t.Fatal("Done not closed after Close")
	}
}

func TestErrorTail(t *testing.T) {
	long := strings.Repeat("noise\n", 400) + "the last line"
	tests := []struct{ in, want string }{
		{"", ""},
		{"  boom\n", "boom"},
		{long, ""}, // checked below
	}
	for _, tt := range tests[:2] {
		if got := errorTail(tt.in); got != tt.want {
			t.Errorf("errorTail(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	got := errorTail(long)
	if len(got) > errorTailBytes+len("…") || !strings.HasPrefix(got, "…noise\n") || !strings.HasSuffix(got, "the last line") {
		t.Errorf("errorTail(long) = %q", got)
	}
}

func TestDialWithDoneCtx(t *testing.T) {
	cx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, cfg := range []Config{
		{ServerName: "s", Transport: TransportStdio, Command: "/bin/sh"},
		{ServerName: "h", Transport: TransportStreamableHTTP, URL: "http://127.0.0.1:1/mcp"},
	} {
		_, err := dial(cx, cfg, dialOptions{})
		if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), `mcp server "`+cfg.ServerName+`": connect: `) {
			t.Errorf("%s: err = %v", cfg.Transport, err)
		}
	}
	_, err := dial(context.Background(), Config{ServerName: "x", Transport: "carrier-pigeon"}, dialOptions{})
	if !errors.Is(err, harnessctx.ErrInvalidConfig) {
		t.Errorf("unknown transport: err = %v", err)
	}
}
