package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/elicitation"
	"github.com/cordisgo/harness/gateway"
	"github.com/cordisgo/harness/plugins/mcpclient"
	"github.com/cordisgo/harness/testkit/mcptest"
)

// legacy is the protocol version the server-request tests speak on both sides: 2026-07-28
// replaces requests from the server by input requests in results (SEP-2322).
const legacy = "2025-11-25"

// askServer's tools, resource and prompt send requests back to the client: "ask" elicits a
// name, "steps" elicits and then reports progress, "sample" asks the client's model, "roots" lists the client's roots, "wait" blocks
// until released (or cancelled), "impatient" withdraws its question after 100 ms and waits to be released; reading
// ask://me and getting the prompt "whoami" elicit too; reading ask://progress reports progress
// and waits until the reader has it.
func askServer(release <-chan struct{}, started chan<- struct{}, progressed <-chan struct{}) *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "ask", Version: "1"}, nil)
	ask := func(cx context.Context, ss *mcp.ServerSession) (string, error) {
		res, err := ss.Elicit(cx, &mcp.ElicitParams{Message: "who are you?", RequestedSchema: json.RawMessage(
			`{"type":"object","properties":{"name":{"type":"string","minLength":1}},"required":["name"]}`)})
		if err != nil {
			return "", err
		}
		b, _ := json.Marshal(res.Content)
		return res.Action + " " + string(b), nil
	}
	result := func(s string, err error) (*mcp.CallToolResult, any, error) {
		if err != nil {
			return nil, nil, err
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}, nil, nil
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "ask"}, func(cx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		return result(ask(cx, req.Session))
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "impatient"}, func(cx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		// The server withdraws its question (notifications/cancelled) and goes on.
		ecx, cancel := context.WithTimeout(cx, 100*time.Millisecond)
		defer cancel()
		if _, err := ask(ecx, req.Session); err == nil {
			return result("answered", nil)
		}
		select { // still in flight: the question ends by the server's word alone
		case <-release:
			return result("gave up", nil)
		case <-cx.Done():
			return result("", cx.Err())
		}
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "sample"}, func(cx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		res, err := req.Session.CreateMessage(cx, &mcp.CreateMessageParams{MaxTokens: 10, //nolint:staticcheck // SEP-2577: sampling stays for peers on protocol versions that have it (2025-11-25)
			Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "hi"}}}}) //nolint:staticcheck // SEP-2577: sampling stays for peers on protocol versions that have it (2025-11-25)
		if err != nil {
			return result("", err)
		}
		return result(res.Model+": "+res.Content.(*mcp.TextContent).Text, nil)
	})
	mcptest.AddRootsTool(srv)
	mcp.AddTool(srv, &mcp.Tool{Name: "wait"}, func(cx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		started <- struct{}{}
		select {
		case <-release:
			return result("released", nil)
		case <-cx.Done():
			return result("", cx.Err())
		}
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "steps"}, func(cx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		// Asks, then reports progress and waits until the caller has it: progress after an
		// input round.
		s, err := ask(cx, req.Session)
		if err != nil {
			return nil, nil, err
		}
		if tok := req.Params.GetProgressToken(); tok != nil {
			if err := req.Session.NotifyProgress(cx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: 1, Total: 2, Message: "asked"}); err != nil {
				return nil, nil, err
			}
			select {
			case <-progressed:
			case <-cx.Done():
				return nil, nil, cx.Err()
			}
		}
		return result(s, nil)
	})
	srv.AddResource(&mcp.Resource{URI: "ask://me", Name: "me"}, func(cx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		s, err := ask(cx, req.Session)
		if err != nil {
			return nil, err
		}
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "ask://me", Text: s}}}, nil
	})
	srv.AddResource(&mcp.Resource{URI: "ask://progress", Name: "progress"}, func(cx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		if tok := req.Params.GetProgressToken(); tok != nil {
			if err := req.Session.NotifyProgress(cx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: 1, Total: 2, Message: "half"}); err != nil {
				return nil, err
			}
			select { // the reader saw it: progress arrives while its request is in flight
			case <-progressed:
			case <-cx.Done():
				return nil, cx.Err()
			}
		}
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "ask://progress", Text: "done"}}}, nil
	})
	srv.AddPrompt(&mcp.Prompt{Name: "whoami"}, func(cx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		s, err := ask(cx, req.Session)
		if err != nil {
			return nil, err
		}
		return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: s}}}}, nil
	})
	return srv
}

// askFleet is a gateway over one askServer upstream (Streamable HTTP, legacy protocol, roots
// configured), prepared before the client connects as harness serve does.
type askFleet struct {
	*fleet
	release    chan struct{}
	started    chan struct{}
	progressed chan struct{} // a reader of ask://progress got its progress
}

func newAskFleet(t *testing.T, prepare func(root *ctx.Context)) *askFleet {
	t.Helper()
	f := &askFleet{release: make(chan struct{}), started: make(chan struct{}, 8), progressed: make(chan struct{}, 1)}
	up := mcptest.NewHTTP(t, func() *mcp.Server { return askServer(f.release, f.started, f.progressed) })
	root := newTree(t)
	if prepare != nil {
		prepare(root)
	}
	var cfg mcpclient.Config
	cfg.Default()
	cfg.ServerName, cfg.Transport, cfg.URL, cfg.ProtocolVersion = "ask", mcpclient.TransportStreamableHTTP, up.URL(), legacy
	cfg.Roots = []string{"/srv/configured"}
	mountConfig(t, root, cfg)
	f.fleet = serveGateway(t, root, gateway.Options{})
	return f
}

// asker is a downstream client that answers elicitations with its name and sampling with
// its model, and counts what it was asked.
type asker struct {
	name     string
	elicited atomic.Int32
	sampled  atomic.Int32
	block    bool          // elicitations wait for their context to end
	asked    chan struct{} // a blocked elicitation arrived
	ended    chan struct{} // a blocked elicitation's context ended
}

// connectLatest connects a to srv in memory (as over harness serve --stdio), with the SDK's
// default protocol: 2026-07-28, where server requests travel as input requests in results
// (the gateway's Streamable HTTP handler is stateful, so HTTP sessions initialize instead).
func (a *asker) connectLatest(t *testing.T, srv *mcp.Server, roots ...string) *mcp.ClientSession {
	t.Helper()
	return a.connectLatestWith(t, srv, &mcp.ClientOptions{}, roots...)
}

// connectLatestWith is connectLatest with opts (its elicitation and sampling handlers are a's).
func (a *asker) connectLatestWith(t *testing.T, srv *mcp.Server, opts *mcp.ClientOptions, roots ...string) *mcp.ClientSession {
	t.Helper()
	ct := mcptest.InMemory(t, srv)
	o := *opts
	o.ElicitationHandler = func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		a.elicited.Add(1)
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": a.name}}, nil
	}
	o.CreateMessageHandler = func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) { //nolint:staticcheck // SEP-2577: sampling stays for peers on protocol versions that have it (2025-11-25)
		a.sampled.Add(1)
		return &mcp.CreateMessageResult{Model: a.name + "-model", Role: "assistant", Content: &mcp.TextContent{Text: "hello"}}, nil //nolint:staticcheck // SEP-2577: sampling stays for peers on protocol versions that have it (2025-11-25)
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "downstream", Version: "1"}, &o)
	for _, r := range roots {
		c.AddRoots(&mcp.Root{URI: r}) //nolint:staticcheck // SEP-2577: roots stay for peers on protocol versions that have them (2025-11-25)
	}
	cs, err := c.Connect(t.Context(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

func (a *asker) connect(t *testing.T, url string, roots ...string) *mcp.ClientSession {
	t.Helper()
	opts := &mcp.ClientOptions{}
	if a != nil {
		opts.ElicitationHandler = func(cx context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			a.elicited.Add(1)
			if a.block {
				a.asked <- struct{}{}
				<-cx.Done()
				a.ended <- struct{}{}
				return nil, cx.Err()
			}
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": a.name}}, nil
		}
		opts.CreateMessageHandler = func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) { //nolint:staticcheck // SEP-2577: sampling stays for peers on protocol versions that have it (2025-11-25)
			a.sampled.Add(1)
			return &mcp.CreateMessageResult{Model: a.name + "-model", Role: "assistant", Content: &mcp.TextContent{Text: "hello"}}, nil //nolint:staticcheck // SEP-2577: sampling stays for peers on protocol versions that have it (2025-11-25)
		}
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "downstream", Version: "1"}, opts)
	for _, r := range roots {
		c.AddRoots(&mcp.Root{URI: r}) //nolint:staticcheck // SEP-2577: roots stay for peers on protocol versions that have them (2025-11-25)
	}
	return dial(t, c, url, &mcp.ClientSessionOptions{ProtocolVersion: legacy})
}

func call(t *testing.T, cs *mcp.ClientSession, tool string) string {
	t.Helper()
	got, err := tryCall(t.Context(), cs, tool)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// tryCall is call for goroutines other than the test's.
func tryCall(cx context.Context, cs *mcp.ClientSession, tool string) (string, error) {
	res, err := cs.CallTool(cx, &mcp.CallToolParams{Name: tool})
	if err != nil {
		return "", fmt.Errorf("%s: %w", tool, err)
	}
	if res.IsError {
		return "", fmt.Errorf("%s: tool error %s", tool, text(res))
	}
	return text(res), nil
}

// routes are the two routes the forwarding tests run on, with the ask server's tool names there.
var routes = []struct{ path, prefix string }{{"/mcp", "mcp__ask__"}, {"/mcp/servers/ask", ""}}

// serverRoute is one of the ask fleet's routes as a server, for in-memory sessions.
type serverRoute struct {
	srv    *mcp.Server
	prefix string // of the ask server's tool and prompt names
	name   string
}

// servers returns the aggregated route's server and the ask server's per-server one.
func (f *askFleet) servers(t *testing.T) []serverRoute {
	t.Helper()
	perServer, err := f.gw.Server("ask")
	if err != nil {
		t.Fatal(err)
	}
	return []serverRoute{{f.gw.Aggregated(), "mcp__ask__", "aggregated"}, {perServer, "", "per-server"}}
}

// An elicitation reaches the session whose call caused it, on both routes, and no other
// session; so do sampling and roots/list. A session whose client has no roots gets the
// configured ones.
func TestServerRequestsReachTheCaller(t *testing.T) {
	f := newAskFleet(t, nil)
	for _, rt := range routes {
		t.Run(rt.path, func(t *testing.T) {
			a, b := &asker{name: "alice"}, &asker{name: "bob"}
			as := a.connect(t, f.url+rt.path, "file:///home/alice")
			bs := b.connect(t, f.url+rt.path)
			if got := call(t, as, rt.prefix+"ask"); got != `accept {"name":"alice"}` {
				t.Fatalf("alice's call: %q", got)
			}
			if got := call(t, bs, rt.prefix+"ask"); got != `accept {"name":"bob"}` {
				t.Fatalf("bob's call: %q", got)
			}
			if a.elicited.Load() != 1 || b.elicited.Load() != 1 {
				t.Fatalf("elicitations: alice %d, bob %d; want one each", a.elicited.Load(), b.elicited.Load())
			}
			if got := call(t, bs, rt.prefix+"sample"); got != "bob-model: hello" {
				t.Fatalf("bob's sampling: %q", got)
			}
			if a.sampled.Load() != 0 || b.sampled.Load() != 1 {
				t.Fatalf("sampling: alice %d, bob %d", a.sampled.Load(), b.sampled.Load())
			}
			if got := call(t, as, rt.prefix+"roots"); got != "[file:///home/alice]" {
				t.Fatalf("alice's roots: %q", got)
			}
			if got := call(t, bs, rt.prefix+"roots"); got != "[file:///srv/configured]" {
				t.Fatalf("bob's roots (his client has none): %q", got)
			}
		})
	}
}

// Resource reads and prompts that elicit reach their caller too.
func TestServerRequestsFromReadsAndPrompts(t *testing.T) {
	f := newAskFleet(t, nil)
	for _, rt := range routes {
		t.Run(rt.path, func(t *testing.T) {
			a, b := &asker{name: "alice"}, &asker{name: "bob"}
			as := a.connect(t, f.url+rt.path)
			b.connect(t, f.url+rt.path)
			res, err := as.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "ask://me"})
			if err != nil {
				t.Fatal(err)
			}
			if got := res.Contents[0].Text; got != `accept {"name":"alice"}` {
				t.Fatalf("read: %q", got)
			}
			pr, err := as.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: rt.prefix + "whoami"})
			if err != nil {
				t.Fatal(err)
			}
			if got := pr.Messages[0].Content.(*mcp.TextContent).Text; got != `accept {"name":"alice"}` {
				t.Fatalf("prompt: %q", got)
			}
			if a.elicited.Load() != 2 || b.elicited.Load() != 0 {
				t.Fatalf("elicitations: alice %d, bob %d", a.elicited.Load(), b.elicited.Load())
			}
		})
	}
}

// hostResponder stands for the host's own surface (a terminal): it answers "host".
type hostResponder struct{ asked atomic.Int32 }

func (*hostResponder) Supports(elicitation.Mode) bool { return true }

func (h *hostResponder) Elicit(context.Context, *elicitation.Request) (*elicitation.Response, error) {
	h.asked.Add(1)
	return &elicitation.Response{Action: elicitation.Accept, Content: map[string]any{"name": "host"}}, nil
}

// A downstream client without the capability: the host's responder answers; without one,
// the server is told decline (and a sampling request fails).
func TestServerRequestsWithoutTheCapability(t *testing.T) {
	host := &hostResponder{}
	f := newAskFleet(t, func(root *ctx.Context) {
		if _, err := elicitation.Provide(root, "terminal", host); err != nil {
			t.Fatal(err)
		}
	})
	var none *asker
	cs := none.connect(t, f.url+"/mcp")
	if got := call(t, cs, "mcp__ask__ask"); got != `accept {"name":"host"}` {
		t.Fatalf("result %q, want the host's answer", got)
	}
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "mcp__ask__sample"})
	if err != nil || !res.IsError || !strings.Contains(text(res), "sampling") {
		t.Fatalf("sampling without a sampler: %v %q", err, text(res))
	}

	f = newAskFleet(t, nil)
	cs = none.connect(t, f.url+"/mcp/servers/ask")
	if got := call(t, cs, "ask"); got != "decline null" {
		t.Fatalf("result %q, want decline", got)
	}
	if host.asked.Load() != 1 {
		t.Fatalf("the host's responder was asked %d times", host.asked.Load())
	}
}

// With calls of two sessions in flight on one upstream connection, a server request cannot
// be attributed: it reaches neither session (the host answers, here nobody: decline).
func TestServerRequestNeverToAnotherSession(t *testing.T) {
	f := newAskFleet(t, nil)
	a, b := &asker{name: "alice"}, &asker{name: "bob"}
	as := a.connect(t, f.url+"/mcp")
	bs := b.connect(t, f.url+"/mcp")
	var wg sync.WaitGroup
	wg.Go(func() {
		if got, err := tryCall(t.Context(), bs, "mcp__ask__wait"); err != nil || got != "released" {
			t.Errorf("wait: %q %v", got, err)
		}
	})
	<-f.started
	got := call(t, as, "mcp__ask__ask")
	close(f.release)
	wg.Wait()
	if got != "decline null" || a.elicited.Load() != 0 || b.elicited.Load() != 0 {
		t.Fatalf("result %q; elicitations alice %d, bob %d: want decline, none", got, a.elicited.Load(), b.elicited.Load())
	}
}

// A server that withdraws its question (notifications/cancelled for its elicitation/create)
// has the question shown to the calling session cancelled, and its call goes on.
func TestElicitationWithdrawnByTheServer(t *testing.T) {
	f := newAskFleet(t, nil)
	a := &asker{name: "alice", block: true, asked: make(chan struct{}, 1), ended: make(chan struct{}, 1)}
	as := a.connect(t, f.url+"/mcp")
	var (
		got string
		err error
		wg  sync.WaitGroup
	)
	wg.Go(func() { got, err = tryCall(t.Context(), as, "mcp__ask__impatient") })
	<-a.asked
	<-a.ended // while the call is still in flight
	close(f.release)
	wg.Wait()
	if err != nil || got != "gave up" {
		t.Fatalf("result %q %v", got, err)
	}
}

// A downstream cancellation of a call whose elicitation is pending cancels the elicitation
// shown to that session.
func TestElicitationCancelledWithTheCall(t *testing.T) {
	f := newAskFleet(t, nil)
	a := &asker{name: "alice", block: true, asked: make(chan struct{}, 1), ended: make(chan struct{}, 1)}
	as := a.connect(t, f.url+"/mcp/servers/ask")
	cx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		_, err := as.CallTool(cx, &mcp.CallToolParams{Name: "ask"})
		done <- err
	}()
	select {
	case <-a.asked:
	case err := <-done:
		t.Fatalf("the call ended before its elicitation: %v", err)
	}
	cancel()
	<-a.ended
	if err := <-done; err == nil {
		t.Fatal("a cancelled call succeeded")
	}
}

// The demo server asks the SDK's way (an input request in its first result, SEP-2322, on
// 2026-07-28 upstream): the elicitation reaches the calling session as elicitation/create,
// in form mode with the server's schema and in URL mode with its URL, and the server's
// notifications/elicitation/complete follows the URL to that session.
func TestDemoAskForwarded(t *testing.T) {
	root := newTree(t)
	mountHTTP(t, root, "demo", demoUpstream(t))
	f := serveGateway(t, root, gateway.Options{})
	var (
		mu   sync.Mutex
		seen []*mcp.ElicitParams
	)
	completed := make(chan string, 1)
	c := mcp.NewClient(&mcp.Implementation{Name: "downstream", Version: "1"}, &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}, URL: &mcp.URLElicitationCapabilities{}}},
		ElicitationHandler: func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			mu.Lock()
			seen = append(seen, r.Params)
			mu.Unlock()
			if r.Params.Mode == "url" {
				return &mcp.ElicitResult{Action: "accept"}, nil
			}
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Grace", "age": 85}}, nil
		},
		ElicitationCompleteHandler: func(_ context.Context, r *mcp.ElicitationCompleteNotificationRequest) {
			completed <- r.Params.ElicitationID
		},
	})
	cs := dial(t, c, f.url+"/mcp", &mcp.ClientSessionOptions{ProtocolVersion: legacy})
	if got := call(t, cs, "mcp__demo__ask"); got != "accept: age=85, color=green, name=Grace, subscribe=false" {
		t.Fatalf("form: %q", got)
	}
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "mcp__demo__ask", Arguments: map[string]any{"mode": "url"}})
	if err != nil || res.IsError || !strings.HasPrefix(text(res), "accept: confirmed demo-") {
		t.Fatalf("url: %v %q", err, text(res))
	}
	id := strings.TrimPrefix(text(res), "accept: confirmed ")
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 2 || seen[0].Mode != "form" || !strings.Contains(fmt.Sprint(seen[0].RequestedSchema), "Favourite colour") ||
		seen[1].Mode != "url" || !strings.HasSuffix(seen[1].URL, id) || seen[1].ElicitationID != id {
		t.Fatalf("elicitations seen: %+v", seen)
	}
	if got := <-completed; got != id {
		t.Fatalf("completion of %q, want %q", got, id)
	}
}

// A client on 2026-07-28 (the go-sdk's default) is asked through input requests in the
// call's results, and retries with the answers: elicitation, sampling and roots reach the
// calling session that way, on both routes, and no other session.
func TestServerRequestsInRounds(t *testing.T) {
	f := newAskFleet(t, nil)
	for _, rt := range f.servers(t) {
		t.Run(rt.name, func(t *testing.T) {
			a, b := &asker{name: "alice"}, &asker{name: "bob"}
			as := a.connectLatest(t, rt.srv, "file:///home/alice")
			b.connectLatest(t, rt.srv)
			if v := as.InitializeResult().ProtocolVersion; v < "2026-07-28" {
				t.Fatalf("protocol %s, want input requests", v)
			}
			if got := call(t, as, rt.prefix+"ask"); got != `accept {"name":"alice"}` {
				t.Fatalf("alice's call: %q", got)
			}
			if got := call(t, as, rt.prefix+"sample"); got != "alice-model: hello" {
				t.Fatalf("alice's sampling: %q", got)
			}
			if got := call(t, as, rt.prefix+"roots"); got != "[file:///home/alice]" {
				t.Fatalf("alice's roots: %q", got)
			}
			if a.elicited.Load() != 1 || a.sampled.Load() != 1 || b.elicited.Load() != 0 || b.sampled.Load() != 0 {
				t.Fatalf("alice %d/%d, bob %d/%d", a.elicited.Load(), a.sampled.Load(), b.elicited.Load(), b.sampled.Load())
			}
			// A retry naming a round the gateway does not know is refused.
			_, err := as.CallTool(t.Context(), &mcp.CallToolParams{Name: rt.prefix + "ask", RequestState: "gw-round-forged",
				InputResponses: mcp.InputResponseMap{"gateway": &mcp.ElicitResult{Action: "accept"}}})
			if err == nil || !strings.Contains(err.Error(), "request state is unknown") {
				t.Fatalf("forged request state: %v", err)
			}
		})
	}
}

// A resource read's progress reaches the session that read, with its own token, on both
// routes (the gateway sends a token of its own upstream).
func TestReadProgress(t *testing.T) {
	f := newAskFleet(t, nil)
	for _, rt := range routes {
		t.Run(rt.path, func(t *testing.T) {
			progress := make(chan *mcp.ProgressNotificationParams, 4)
			c := mcp.NewClient(&mcp.Implementation{Name: "downstream", Version: "1"}, &mcp.ClientOptions{
				ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
					progress <- r.Params
					f.progressed <- struct{}{}
				},
			})
			cs := dial(t, c, f.url+rt.path, nil)
			p := &mcp.ReadResourceParams{URI: "ask://progress"}
			p.SetProgressToken("read-1")
			res, err := cs.ReadResource(t.Context(), p)
			if err != nil || res.Contents[0].Text != "done" {
				t.Fatalf("read: %v %+v", err, res)
			}
			got := <-progress
			if got.ProgressToken != "read-1" || got.Message != "half" || got.Total != 2 {
				t.Fatalf("progress %+v", got)
			}
		})
	}
}
