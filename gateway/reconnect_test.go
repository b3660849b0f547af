package gateway_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cordisgo/harness/gateway"
	"github.com/cordisgo/harness/plugins/mcpclient"
	"github.com/cordisgo/harness/testkit/mcptest"
)

// A client's new session with its server resyncs the routes serving it (NoticeConnected):
// after the server restarts with other resources, and sends no list_changed (a new session
// is not a change it saw), the aggregated route lists the new session's resources. The
// gateway hears of the new session from the upstream itself, not only from the status
// event: Emit stops at the first listener that fails, so a faulty status listener of
// another plugin, registered first here, would otherwise leave the route listing the
// resources of a session that is gone (the NoticeConnected fix of adae5f3, reverted, fails
// here).
func TestReconnectResyncsResources(t *testing.T) {
	var starts atomic.Int32
	up := mcptest.NewHTTP(t, func() *mcp.Server {
		n := starts.Add(1)
		srv := mcp.NewServer(&mcp.Implementation{Name: "up", Version: fmt.Sprint(n)}, nil)
		uri := fmt.Sprintf("test://res-%d", n)
		srv.AddResource(&mcp.Resource{URI: uri, Name: fmt.Sprint("res-", n)}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, Text: "x"}}}, nil
		})
		return srv
	})
	root := newTree(t)
	if _, err := mcpclient.StatusEvent.On(root, func(mcpclient.Status) error { return errors.New("a faulty status listener") }); err != nil {
		t.Fatal(err)
	}
	mountHTTP(t, root, "up", up.URL())
	f := serveGateway(t, root, gateway.Options{})
	changed := make(chan struct{}, 1)
	c := mcp.NewClient(&mcp.Implementation{Name: "downstream", Version: "1"}, &mcp.ClientOptions{
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) {
			select {
			case changed <- struct{}{}:
			default:
			}
		}})
	cs := dial(t, c, f.url+"/mcp", nil)
	uris := func() []string {
		return listed(t, cs.Resources(t.Context(), nil), func(r *mcp.Resource) string { return r.URI })
	}
	wait := func(want string) {
		deadline := time.After(10 * time.Second)
		for !slices.Contains(uris(), want) {
			select {
			case <-changed:
			case <-deadline:
				t.Fatalf("the aggregated route lists %v, want %s", uris(), want)
			}
		}
	}
	wait("test://res-1")
	up.Restart()
	up.CloseSessions(0)
	wait("test://res-2")
}
