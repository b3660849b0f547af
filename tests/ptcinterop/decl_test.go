//go:build unix

package ptcinterop

import (
	"context"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/internal/demoserver"
	"github.com/cordisgo/harness/plugins/mcpclient"
	"github.com/cordisgo/harness/plugins/ptc"
	"github.com/cordisgo/harness/plugins/toolregistry"
)

// fleet mounts the registry and the given clients on a new root and waits until the tool
// named last is visible (server-everything registers one tool after initialization).
func fleet(t *testing.T, last string, clients ...mcpclient.Config) (*ctx.Context, *toolregistry.Registry) {
	t.Helper()
	root := ctx.New(ctx.Options{Logger: slog.New(slog.DiscardHandler)})
	t.Cleanup(func() { _ = root.Scope().Dispose(context.Background()) })
	if _, err := root.Plugin(toolregistry.Plugin, nil); err != nil {
		t.Fatal(err)
	}
	if err := root.Settle(context.Background()); err != nil {
		t.Fatal(err)
	}
	reg, _ := toolregistry.Key.Get(root)
	changed := make(chan struct{}, 1)
	if _, err := toolregistry.Changed.On(root, func(toolregistry.Change) error {
		select {
		case changed <- struct{}{}:
		default:
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for _, cfg := range clients {
		s, err := root.Plugin(mcpclient.Plugin, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Wait(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.After(time.Minute)
	for {
		if _, ok := reg.Lookup(root, last); ok {
			return root, reg
		}
		select {
		case <-changed:
		case <-deadline:
			t.Fatalf("tool %s never appeared; tools: %d", last, len(reg.List(root)))
		}
	}
}

func clientConfig(name, transport string) mcpclient.Config {
	var cfg mcpclient.Config
	cfg.Default()
	cfg.ServerName, cfg.Transport, cfg.FailOnStartupError = name, transport, true
	return cfg
}

// The declarations of every tool of server-everything and of the demo server type-check
// with tsc (strict), together with a program that uses them as the model would; so does the
// catalog of the system prompt in its first form (a line a tool).
func TestDeclarationsTypeCheck(t *testing.T) {
	tsc := suite.File(t, "typescript/bin/tsc")
	everything := suite.File(t, "@modelcontextprotocol/server-everything/dist/index.js")
	nodeBin := suite.Node(t)

	h, closeSessions := demoserver.HandlerWithClose(demoserver.Options{})
	srv := httptest.NewServer(h)
	t.Cleanup(func() {
		closeSessions()
		srv.CloseClientConnections()
		srv.Close()
	})
	ev := clientConfig("everything", mcpclient.TransportStdio)
	ev.Command, ev.Args = nodeBin, []string{everything, "stdio"}
	demo := clientConfig("demo", mcpclient.TransportStreamableHTTP)
	demo.URL = srv.URL + "/mcp"
	root, reg := fleet(t, "mcp__everything__simulate-research-query", ev, demo)

	tools := reg.List(root)
	decl := ptc.Declarations(tools)
	for _, in := range tools {
		if !strings.Contains(decl, fmt.Sprintf("%q(args", in.Name)) {
			t.Errorf("no declaration of %s", in.Name)
		}
	}
	if again := ptc.Declarations(reg.List(root)); again != decl {
		t.Error("the declarations of the same tools differ")
	}
	t.Logf("%d tools, %d bytes of declarations", len(tools), len(decl))
	if os.Getenv("PTC_SHOW") != "" {
		t.Log(decl)
	}

	dir := t.TempDir()
	use := `async function program() {
  const echoed = await tools["mcp__everything__echo"]({ message: "hi" });
  for (const c of echoed.content) if (c.type === "text") console.log(c.text.toUpperCase());
  const sum = await tools["mcp__demo__add"]({ a: 1, b: 2 });
  const n: number = sum.structuredContent.sum;
  const img = await tools["mcp__demo__image"]({});
  const first = img.content[0];
  const data: string = first.type === "image" ? atob(first.data) : "";
  try {
    await tools["mcp__demo__fail"]({ message: "x" });
  } catch (e) {
    if (e instanceof ToolCallError) console.log(e.tool, e.code, e.message);
  }
  await sleep(1);
  return { n, bytes: data.length };
}
program();
`
	// The catalog in its first form (a line a tool) declares the same types.
	catalog := ptc.Catalog(tools, 1<<20)
	t.Logf("catalog: %d bytes a line a tool, %d bytes by default (%d)", len(catalog), len(ptc.Catalog(tools, ptc.DefaultCatalogBytes)), ptc.DefaultCatalogBytes)
	for declName, text := range map[string]string{"full": decl, "catalog": catalog} {
		sub := filepath.Join(dir, declName)
		files := map[string]string{
			"tools.d.ts": text,
			"use.ts":     use,
			"tsconfig.json": `{"compilerOptions": {"strict": true, "noEmit": true, "target": "es2022", "lib": ["es2022"], "types": []},
 "files": ["tools.d.ts", "use.ts"]}`,
		}
		if err := os.MkdirAll(sub, 0o700); err != nil {
			t.Fatal(err)
		}
		for name, text := range files {
			if err := os.WriteFile(filepath.Join(sub, name), []byte(text), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		out, err := exec.Command(nodeBin, tsc, "-p", sub).CombinedOutput()
		if err != nil {
			t.Fatalf("tsc (%s): %v\n%s\n--- tools.d.ts ---\n%s", declName, err, out, text)
		}
	}
}
