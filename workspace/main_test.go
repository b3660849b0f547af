package workspace

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	"github.com/cordisgo/harness/internal/mcpserve"
	"github.com/cordisgo/harness/workspace/sandbox"
)

func TestMain(m *testing.M) {
	sandbox.Main() // the shell's commands run through this binary
	if dial := os.Getenv(dialEnv); dial != "" {
		os.Exit(dialOnce(dial))
	}
	goleak.VerifyTestMain(m)
}

// dialEnv makes the test binary a one-shot network client (for the escape suite, run from
// inside the sandbox): NETWORK:ADDRESS, dialled, "x" sent, exit status 0 when it went out.
const dialEnv = "WORKSPACE_TEST_DIAL"

func dialOnce(spec string) int {
	network, addr, _ := strings.Cut(spec, ":")
	c, err := net.DialTimeout(network, addr, 5*time.Second)
	if err == nil {
		_, err = c.Write([]byte("x"))
		_ = c.Close()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "dial:", err)
		return 1
	}
	fmt.Println("sent")
	return 0
}

// rig is a workspace server on a temporary root with a client connected in memory.
type rig struct {
	t    *testing.T
	dir  string // the root, as made (symbolic links not resolved)
	srv  *Server
	cs   *mcp.ClientSession
	home string // a home directory of its own, with credentials in it
}

// newRig starts a workspace on a fresh root holding files (name → content; a name ending
// in / is an empty directory).
func newRig(t *testing.T, opts Options, files map[string]string) *rig {
	t.Helper()
	r := &rig{t: t, dir: t.TempDir(), home: t.TempDir()}
	write(t, r.dir, files)
	write(t, r.home, map[string]string{".ssh/id_ed25519": "PRIVATE KEY", ".config/harness/credentials.yaml": "deepseek: sk-secret"})
	if opts.Root == "" {
		opts.Root = r.dir
	}
	if opts.Env == nil {
		opts.Env = append(os.Environ(), "HOME="+r.home, "XDG_CONFIG_HOME="+filepath.Join(r.home, ".config"),
			"XDG_STATE_HOME="+filepath.Join(r.home, ".local/state"), "XDG_CACHE_HOME="+filepath.Join(r.home, ".cache"))
	}
	if opts.CacheDir == "" {
		opts.CacheDir = filepath.Join(r.home, ".cache", "harness", "sandbox-cache")
	}
	srv, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	r.srv = srv
	st, ct := mcp.NewInMemoryTransports()
	cx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- mcpserve.Transport(cx, srv.mcp, st) }()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(t.Context(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	r.cs = cs
	t.Cleanup(func() {
		_ = cs.Close()
		cancel()
		if err := <-served; err != nil {
			t.Errorf("serve: %v", err)
		}
		if err := srv.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return r
}

func write(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if strings.HasSuffix(name, "/") {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// call calls a tool and returns its text and whether it is a tool error.
func (r *rig) call(tool string, args map[string]any) (string, bool) {
	r.t.Helper()
	res := r.result(tool, args)
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String(), res.IsError
}

func (r *rig) result(tool string, args map[string]any) *mcp.CallToolResult {
	r.t.Helper()
	cx, cancel := context.WithTimeout(r.t.Context(), 2*time.Minute)
	defer cancel()
	res, err := r.cs.CallTool(cx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		r.t.Fatalf("%s %v: %v", tool, args, err)
	}
	return res
}

// ok calls a tool that must succeed.
func (r *rig) ok(tool string, args map[string]any) string {
	r.t.Helper()
	out, isErr := r.call(tool, args)
	if isErr {
		r.t.Fatalf("%s %s: tool error: %s", tool, js(args), out)
	}
	return out
}

// fails calls a tool that must fail with a message containing want.
func (r *rig) fails(tool string, args map[string]any, want string) string {
	r.t.Helper()
	out, isErr := r.call(tool, args)
	if !isErr {
		r.t.Fatalf("%s %s succeeded: %s", tool, js(args), out)
	}
	if !strings.Contains(out, want) {
		r.t.Fatalf("%s %s: error %q, want it to contain %q", tool, js(args), out, want)
	}
	return out
}

func js(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func (r *rig) file(name string) string {
	r.t.Helper()
	b, err := os.ReadFile(filepath.Join(r.dir, filepath.FromSlash(name)))
	if err != nil {
		r.t.Fatal(err)
	}
	return string(b)
}

func contains(t *testing.T, what, got string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(got, w) {
			t.Errorf("%s: %q does not contain %q", what, got, w)
		}
	}
}

// measure returns the bytes the process allocated while fn ran.
func measure(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}
