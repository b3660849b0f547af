package host_test

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/cordisgo/harness/host"
	"github.com/cordisgo/harness/plugins/remote"
	"github.com/cordisgo/harness/profiles"
)

// An embedder runs a host without the harness binary: a profile checked and started, the
// status of its MCP servers read, the host's remote methods called in process, the tree
// disposed.
func Example() {
	url, stop := serveDemo() // the demo MCP server over Streamable HTTP
	defer stop()
	cx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	doc := `
plugins:
  tools: {use: toolregistry}
  demo:
    use: mcpclient
    config: {serverName: demo, transport: streamable-http, url: "` + url + `"}
`
	if err := runProfile(cx, doc); err != nil {
		fmt.Println(err)
	}
	// Output:
	// demo: connected (8 tools)
	// [demo]
	// no MCP server "dmeo" in profile "embedded.yaml"; known: demo (did you mean "demo"?)
}

// runProfile checks the profile document doc, starts it, prints what its MCP servers
// report, calls the host's methods in process and disposes the tree.
func runProfile(cx context.Context, doc string) error {
	catalog := host.Catalog() // add your own plugins to it
	p, err := profiles.Load(profiles.LoadOptions{Name: "embedded.yaml", Data: []byte(doc),
		Catalog: func(use string) bool { _, ok := catalog[use]; return ok },
		Servers: host.ServerDocuments{}}) // another host's {"mcpServers": …} loads as a profile too
	if err != nil {
		return err
	}
	if _, err := host.Check(p, host.CheckOptions{Catalog: catalog, Strict: true}); err != nil {
		return err // every problem, with the key path
	}
	h, err := host.Start(cx, p, host.Options{Catalog: catalog, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return err
	}
	defer func() { _ = h.Close(context.WithoutCancel(cx)) }()
	for _, st := range h.Board().Statuses() {
		fmt.Println(host.StatusLine(st))
	}
	// The host's methods, called in process as another process calls them on a running host.
	if err := h.ExposeAPI(); err != nil {
		return err
	}
	list, err := host.MethodList.Call(cx, remote.NewLocal(h.Root()), struct{}{})
	if err != nil {
		return err
	}
	fmt.Println(list.Names())
	_, err = h.Probe(cx, "dmeo")
	fmt.Println(err) // an *host.UnknownServerError
	return nil
}
