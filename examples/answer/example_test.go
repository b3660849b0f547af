package answer_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"testing"

	"go.uber.org/goleak"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/examples/answer"
	"github.com/cordisgo/harness/internal/demoserver"
	"github.com/cordisgo/harness/plugins/mcpclient"
	"github.com/cordisgo/harness/plugins/toolregistry"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The demo server's ask tool asks its form and its URL; the plugin's responder answers both.
func Example() {
	h, closeSessions := demoserver.HandlerWithClose(demoserver.Options{})
	srv := httptest.NewServer(h)
	defer func() { closeSessions(); srv.Close() }()

	root := ctx.New(ctx.Options{Logger: slog.New(slog.DiscardHandler)})
	defer func() { _ = root.Scope().Dispose(context.Background()) }()
	_, _ = root.Plugin(toolregistry.Plugin, nil)
	_, _ = root.Plugin(answer.Plugin, struct{}{})
	_ = root.Settle(context.Background()) // the responder is there before the client connects
	var cfg mcpclient.Config
	cfg.Default()
	cfg.ServerName, cfg.Transport, cfg.URL = "demo", mcpclient.TransportStreamableHTTP, srv.URL
	_, _ = root.Plugin(mcpclient.Plugin, cfg)
	_ = root.Settle(context.Background())

	reg, _ := toolregistry.Key.Get(root)
	for _, args := range []string{`{}`, `{"mode": "url"}`} {
		res, err := reg.Execute(root, root, "mcp__demo__ask", []byte(args), toolregistry.ExecOptions{})
		fmt.Println(res.Text(), err)
	}
	// Output:
	// accept: age=36, color=green, name=Grace, subscribe=false <nil>
	// accept: confirmed demo-1 <nil>
}
