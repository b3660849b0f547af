package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/ctx/ctxtest"
	"github.com/cordisgo/harness/elicitation"
	"github.com/cordisgo/harness/plugins/toolregistry"
	"github.com/cordisgo/harness/sampling"
	"github.com/cordisgo/harness/secrets"
	"github.com/cordisgo/harness/testkit/elicittest"
	"github.com/cordisgo/harness/testkit/mcptest"
)

// askServer has tools that send requests back to the client: "ask" elicits a name and an age
// and answers with what it got; "caps" answers with the client capabilities it saw; "roots"
// lists the client's roots; "sample" asks the client's model.
func askServer() *mcp.Server { return askServerWith(nil) }

func askServerWith(opts *mcp.ServerOptions) *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "ask", Version: "1"}, opts)
	text := func(s string) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "ask"}, func(cx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		res, err := req.Session.Elicit(cx, &mcp.ElicitParams{Message: "who are you?", RequestedSchema: json.RawMessage(`{
			"type": "object",
			"properties": {
				"name": {"type": "string", "title": "Name", "minLength": 1},
				"age": {"type": "integer", "minimum": 1, "maximum": 150, "default": 30}
			},
			"required": ["name"]}`)})
		if err != nil {
			return nil, nil, err
		}
		b, _ := json.Marshal(res.Content)
		return text(res.Action + " " + string(b)), nil, nil
	})
	// "choose" asks with the schema in its argument, as the server wrote it.
	mcp.AddTool(srv, &mcp.Tool{Name: "choose"}, func(cx context.Context, req *mcp.CallToolRequest, in struct {
		Schema map[string]any `json:"schema"`
	}) (*mcp.CallToolResult, any, error) {
		res, err := req.Session.Elicit(cx, &mcp.ElicitParams{Message: "choose", RequestedSchema: in.Schema})
		if err != nil {
			return nil, nil, err
		}
		return text(res.Action), nil, nil
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "caps"}, func(cx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		return text(capsSummary(req.Session.InitializeParams().Capabilities)), nil, nil
	})
	mcptest.AddRootsTool(srv)
	mcp.AddTool(srv, &mcp.Tool{Name: "sample"}, func(cx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		res, err := req.Session.CreateMessage(cx, &mcp.CreateMessageParams{MaxTokens: 10, //nolint:staticcheck // SEP-2577: sampling stays for peers on protocol versions that have it (2025-11-25)
			Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "hi"}}}}) //nolint:staticcheck // SEP-2577: sampling stays for peers on protocol versions that have it (2025-11-25)
		if err != nil {
			return nil, nil, err
		}
		return text(res.Model + ": " + res.Content.(*mcp.TextContent).Text), nil, nil
	})
	return srv
}

// capsSummary names the client capabilities a server sees: elicitation(form,url), sampling,
// roots; "none" when there are none.
func capsSummary(c *mcp.ClientCapabilities) string {
	var out []string
	if e := c.Elicitation; e != nil {
		var modes []string
		if e.Form != nil {
			modes = append(modes, "form")
		}
		if e.URL != nil {
			modes = append(modes, "url")
		}
		out = append(out, "elicitation("+strings.Join(modes, ",")+")")
	}
	if c.Sampling != nil { //nolint:staticcheck // SEP-2577: sampling stays for peers on protocol versions that have it (2025-11-25)
		out = append(out, "sampling")
	}
	if c.RootsV2 != nil { //nolint:staticcheck // SEP-2577: roots stay for peers on protocol versions that have them (2025-11-25)
		out = append(out, fmt.Sprintf("roots(listChanged=%v)", c.RootsV2.ListChanged)) //nolint:staticcheck // SEP-2577: roots stay for peers on protocol versions that have them (2025-11-25)
	}
	if len(out) == 0 {
		return "none"
	}
	return strings.Join(out, " ")
}

// responder answers with its Answer and records the requests it saw.
type responder = elicittest.Recorder

func formResponder(fn func(cx context.Context, r *elicitation.Request) (*elicitation.Response, error)) *responder {
	return &responder{Modes: []elicitation.Mode{elicitation.ModeForm}, Answer: fn}
}

// decliner declines every form it is asked.
func decliner() *responder {
	return formResponder(func(context.Context, *elicitation.Request) (*elicitation.Response, error) {
		return &elicitation.Response{Action: elicitation.Decline}, nil
	})
}

func provideResponder(t *testing.T, c *ctx.Context, r elicitation.Responder) {
	t.Helper()
	if _, err := elicitation.Provide(c, "test", r); err != nil {
		t.Fatal(err)
	}
}

func askEnv(t *testing.T, edit func(*Config)) *env {
	e := newEnv(t)
	cfg := memConfig("a")
	if edit != nil {
		edit(&cfg)
	}
	e.mount(nil, cfg, &hooks{dial: newMemServer(askServer()).dial})
	return e
}

// Without a responder, sampler or roots the client offers no capability at all.
func TestNoCapabilitiesWithoutProviders(t *testing.T) {
	e := askEnv(t, nil)
	if got := e.mustCall(nil, "mcp__a__caps", "").Text(); got != "none" {
		t.Fatalf("capabilities %s, want {}", got)
	}
}

// A responder's answer reaches the server, with the form parsed from the requested schema in
// the server's order; the capability names the form mode only.
func TestElicitationAnswered(t *testing.T) {
	e := newEnv(t)
	r := formResponder(func(_ context.Context, req *elicitation.Request) (*elicitation.Response, error) {
		return &elicitation.Response{Action: elicitation.Accept, Content: map[string]any{"name": "Ada", "age": 36.0}}, nil
	})
	provideResponder(t, e.root, r)
	e.mount(nil, memConfig("a"), &hooks{dial: newMemServer(askServer()).dial})
	if got := e.mustCall(nil, "mcp__a__caps", "").Text(); got != "elicitation(form)" {
		t.Fatalf("capabilities %s", got)
	}
	if got := e.mustCall(nil, "mcp__a__ask", "").Text(); got != `accept {"age":36,"name":"Ada"}` {
		t.Fatalf("result %q", got)
	}
	req := r.Requests()[0]
	if req.Server != "a" || req.Message != "who are you?" || len(req.Form.Fields) != 2 || req.Form.Fields[0].Name != "name" ||
		!req.Form.Fields[0].Required || req.Form.Fields[1].Default != 30.0 || req.Call == nil {
		t.Fatalf("request %+v, form %+v", req, req.Form)
	}
}

// Forms reach the responder as the specification allows them, also where go-sdk's own client
// check is narrower: a titled multi-select whose items say "type": "string" beside their
// anyOf (as go-sdk's conformance server sends it, SEP-1330). A form the specification does
// not allow (a nested object) is refused with invalid params, naming the server, and
// nobody is asked.
func TestElicitationFormsAsSent(t *testing.T) {
	e := newEnv(t)
	r := decliner()
	provideResponder(t, e.root, r)
	e.mount(nil, memConfig("a"), &hooks{dial: newMemServer(askServer()).dial})
	titled := `{"schema": {"type": "object", "properties": {"pick": {"type": "array", "minItems": 1, "items": {"type": "string",
		"anyOf": [{"const": "v1", "title": "First"}, {"const": "v2", "title": "Second"}]}}}}}`
	if got := e.mustCall(nil, "mcp__a__choose", titled).Text(); got != "decline" {
		t.Fatalf("result %q, want decline", got)
	}
	if len(r.Requests()) != 1 {
		t.Fatalf("the responder was asked %d times", len(r.Requests()))
	}
	f := r.Requests()[0].Form.Fields
	if len(f) != 1 || f[0].Kind != elicitation.Multi || len(f[0].Options) != 2 || f[0].Options[1] != (elicitation.Option{Value: "v2", Title: "Second"}) {
		t.Fatalf("form %+v", r.Requests()[0].Form)
	}
	nested := `{"schema": {"type": "object", "properties": {"who": {"type": "object", "properties": {"name": {"type": "string"}}}}}}`
	res, err := e.call(nil, "mcp__a__choose", nested)
	if err == nil && !res.IsError {
		t.Fatalf("a nested form was accepted: %+v", res)
	}
	if msg := fmt.Sprint(err, res); !strings.Contains(msg, `mcp server \"a\": elicitation:`) && !strings.Contains(msg, `mcp server "a": elicitation:`) {
		t.Errorf("the refusal does not name the server: %s", msg)
	}
	if len(r.Requests()) != 1 {
		t.Errorf("the responder was asked about a refused form")
	}
}

// An answer that does not match the schema is refused before it is sent: the server sees a
// decline, and the log says which field was wrong.
func TestElicitationInvalidAnswerRefused(t *testing.T) {
	e := newEnv(t)
	provideResponder(t, e.root, formResponder(func(context.Context, *elicitation.Request) (*elicitation.Response, error) {
		return &elicitation.Response{Action: elicitation.Accept, Content: map[string]any{"name": "Ada", "age": 200.0}}, nil
	}))
	e.mount(nil, memConfig("a"), &hooks{dial: newMemServer(askServer()).dial})
	if got := e.mustCall(nil, "mcp__a__ask", "").Text(); got != "decline null" {
		t.Fatalf("result %q, want decline", got)
	}
	if !strings.Contains(e.log.String(), "age: expected a whole number from 1 to 150, got 200") {
		t.Fatalf("log does not name the field:\n%s", e.log)
	}
}

// A question outlives the call's idle timeout: the deadline is held while the user answers,
// and restarts from the answer. An unanswered one ends at elicitationTimeoutMs as "cancel".
func TestElicitationHoldsIdleDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t)
		provideResponder(t, e.root, formResponder(func(cx context.Context, r *elicitation.Request) (*elicitation.Response, error) {
			select {
			case <-time.After(2 * time.Minute):
			case <-cx.Done():
				return nil, cx.Err()
			}
			if r.Form.Fields[0].Name == "name" {
				return &elicitation.Response{Action: elicitation.Accept, Content: map[string]any{"name": "slow"}}, nil
			}
			return nil, nil
		}))
		cfg := memConfig("a")
		cfg.ToolCallTimeoutMs = 30_000
		e.mount(nil, cfg, &hooks{dial: newMemServer(askServer()).dial})
		if got := e.mustCall(nil, "mcp__a__ask", "").Text(); got != `accept {"age":30,"name":"slow"}` {
			t.Fatalf("result %q", got)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t)
		provideResponder(t, e.root, formResponder(func(cx context.Context, _ *elicitation.Request) (*elicitation.Response, error) {
			<-cx.Done()
			return nil, cx.Err()
		}))
		cfg := memConfig("a")
		cfg.ElicitationTimeoutMs = 90_000
		cfg.MaxToolCallMs = 600_000
		e.mount(nil, cfg, &hooks{dial: newMemServer(askServer()).dial})
		began := time.Now()
		if got := e.mustCall(nil, "mcp__a__ask", "").Text(); got != "cancel null" {
			t.Fatalf("result %q, want cancel", got)
		}
		if took := time.Since(began); took != 90*time.Second {
			t.Fatalf("took %v, want elicitationTimeoutMs", took)
		}
	})
}

// A call's own responder (a gateway session's) answers its elicitations before the scoped
// ones; calls with different origins in flight make the request unattributed.
func TestElicitationDirectedToTheCaller(t *testing.T) {
	e := newEnv(t)
	scoped := decliner()
	provideResponder(t, e.root, scoped)
	e.mount(nil, memConfig("a"), &hooks{dial: newMemServer(askServer()).dial})
	mine := formResponder(func(context.Context, *elicitation.Request) (*elicitation.Response, error) {
		return &elicitation.Response{Action: elicitation.Accept, Content: map[string]any{"name": "mine"}}, nil
	})
	cx := elicitation.WithResponder(WithOrigin(context.Background(), "session-1"), mine)
	res, err := e.reg.Execute(cx, e.root, "mcp__a__ask", nil, toolregistry.ExecOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Text(); got != `accept {"age":30,"name":"mine"}` {
		t.Fatalf("result %q", got)
	}
	if len(scoped.Requests()) != 0 {
		t.Fatalf("the scoped responder was asked too")
	}
}

func TestCauseNeedsOneOrigin(t *testing.T) {
	bgcx := context.Background()
	one, two := WithOrigin(bgcx, "s1"), WithOrigin(bgcx, "s2")
	for _, tc := range []struct {
		name    string
		callers []context.Context
		want    context.Context
	}{
		{"none", nil, nil},
		{"one", []context.Context{bgcx}, bgcx},
		{"same origin", []context.Context{one, WithOrigin(bgcx, "s1")}, one},
		{"two origins", []context.Context{one, two}, nil},
		{"no origin", []context.Context{bgcx, bgcx}, nil},
	} {
		g := newGeneration()
		for i, cx := range tc.callers {
			g.watch.idle = time.Hour
			g.watch.add(&inflight{token: fmt.Sprint(i), caller: cx, cancel: func(error) {}})
		}
		got := g.cause()
		if tc.want == nil && got != nil || tc.want != nil && (got == nil || got.Value(originKey{}) != tc.want.Value(originKey{})) {
			t.Errorf("%s: cause %v, want %v", tc.name, got, tc.want)
		}
		g.watch.stop()
		g.end()
	}
}

// Configured roots are listed as file:// URIs (the SDK sorts them) and announce the
// capability.
func TestRoots(t *testing.T) {
	dir := t.TempDir()
	e := askEnv(t, func(c *Config) { c.Roots = []string{dir, "file:///srv/data/"} })
	if got := e.mustCall(nil, "mcp__a__caps", "").Text(); got != "roots(listChanged=true)" {
		t.Fatalf("capabilities %s", got)
	}
	if got, want := e.mustCall(nil, "mcp__a__roots", "").Text(), "[file:///srv/data file://"+dir+"]"; got != want {
		t.Fatalf("roots %s, want %s", got, want)
	}
}

// A caller's roots function that panics (another plugin's bug) fails like one that returns
// an error: the server gets the configured roots, the client logs why and goes on.
func TestCallerRootsPanic(t *testing.T) {
	e := askEnv(t, func(c *Config) { c.Roots = []string{"file:///srv/data/"} })
	cx := WithRoots(WithOrigin(context.Background(), "s1"), func(context.Context) ([]*mcp.Root, error) { //nolint:staticcheck // SEP-2577: roots stay for peers on protocol versions that have them (2025-11-25)
		panic("a roots bug")
	})
	res, err := e.reg.Execute(cx, e.root, "mcp__a__roots", nil, toolregistry.ExecOptions{})
	if err != nil || res.Text() != "[file:///srv/data]" {
		t.Fatalf("roots: %v %v", res, err)
	}
	if !strings.Contains(e.log.String(), "the caller's roots could not be listed") || !strings.Contains(e.log.String(), "a roots bug") {
		t.Errorf("no log of the panic:\n%s", e.log.String())
	}
}

// The outermost receiving middleware turns a panic while handling a server's message into
// an internal error for that message, logged with its stack.
func TestServerMessagePanicContained(t *testing.T) {
	root, log := ctxtest.NewLogged(t)
	var scrub secrets.Scrubber
	scrub.AddSecret("hunter2-token-value")
	h := recovering(root.Logger(), &scrub)(func(context.Context, string, mcp.Request) (mcp.Result, error) {
		panic("a handler bug near hunter2-token-value")
	})
	res, err := h(context.Background(), "roots/list", nil)
	if res != nil || !errors.Is(err, errHandlerPanicked) {
		t.Fatalf("%v, %v; want the internal error", res, err)
	}
	if s := log.String(); !strings.Contains(s, "handling a message of the server panicked") || !strings.Contains(s, "a handler bug") || !strings.Contains(s, "goroutine") {
		t.Errorf("the log lacks the panic or its stack:\n%s", s)
	}
	if strings.Contains(log.String(), "hunter2") {
		t.Errorf("a configured secret reached the log:\n%s", log.String())
	}
}

func TestRootsValidated(t *testing.T) {
	cfg := memConfig("a")
	cfg.Roots = []string{"relative/dir"}
	err := cfg.Validate()
	if err == nil || !strings.Contains(err.Error(), `"roots[0]": expected an absolute directory or a file:// URI, got "relative/dir"`) {
		t.Fatalf("error %v", err)
	}
}

// A sampler visible from the client answers the server's sampling requests.
func TestSampling(t *testing.T) {
	e := newEnv(t)
	var seen *sampling.Request
	_, err := sampling.Provide(e.root, "model", sampling.Func(func(_ context.Context, r *sampling.Request) (*mcp.CreateMessageResult, error) { //nolint:staticcheck // SEP-2577: sampling stays for peers on protocol versions that have it (2025-11-25)
		seen = r
		return &mcp.CreateMessageResult{Model: "m1", Role: "assistant", Content: &mcp.TextContent{Text: "hello"}}, nil //nolint:staticcheck // SEP-2577: sampling stays for peers on protocol versions that have it (2025-11-25)
	}))
	if err != nil {
		t.Fatal(err)
	}
	e.mount(nil, memConfig("a"), &hooks{dial: newMemServer(askServer()).dial})
	if got := e.mustCall(nil, "mcp__a__caps", "").Text(); got != "sampling" {
		t.Fatalf("capabilities %s", got)
	}
	if got := e.mustCall(nil, "mcp__a__sample", "").Text(); got != "m1: hello" {
		t.Fatalf("result %q", got)
	}
	if seen.Server != "a" || seen.Params.MaxTokens != 10 {
		t.Fatalf("request %+v", seen)
	}
}

// A change of roots alone is taken in place: the server is told (roots/list_changed) and
// lists the new roots on the same connection; adding the first root reconnects instead.
func TestRootsUpdatedInPlace(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	changed := make(chan struct{}, 4)
	srv := askServerWith(&mcp.ServerOptions{RootsListChangedHandler: func(context.Context, *mcp.RootsListChangedRequest) { //nolint:staticcheck // SEP-2577: roots stay for peers on protocol versions that have them (2025-11-25)
		changed <- struct{}{}
	}})
	e := newEnv(t)
	cfg := memConfig("a")
	cfg.Roots = []string{a}
	scope := e.mount(nil, cfg, &hooks{dial: newMemServer(srv).dial})
	if got := e.mustCall(nil, "mcp__a__roots", "").Text(); got != "[file://"+a+"]" {
		t.Fatalf("roots %s", got)
	}
	connects := len(e.st.phases("a"))
	next := cfg
	next.Roots = []string{b}
	if !RootsOnlyChange(cfg, next) {
		t.Fatal("RootsOnlyChange false for a change of roots")
	}
	if err := scope.Update(next); err != nil {
		t.Fatal(err)
	}
	<-changed
	if got := e.mustCall(nil, "mcp__a__roots", "").Text(); got != "[file://"+b+"]" {
		t.Fatalf("roots after the update %s", got)
	}
	if got := e.st.phases("a"); len(got) != connects || scope.State() != ctx.Active {
		t.Fatalf("status reports %v after the update, want the %d before it (no reconnect); scope %v", got, connects, scope.State())
	}
	none := cfg
	none.Roots = nil
	if RootsOnlyChange(cfg, none) || RootsOnlyChange(none, cfg) {
		t.Fatal("adding the first root or removing the last must reconnect")
	}
	other := next
	other.ToolCallTimeoutMs++
	if RootsOnlyChange(cfg, other) {
		t.Fatal("a change beyond the roots must reconnect")
	}
}

// A server on 2026-07-28 asks through input requests in its results, which the SDK fulfils
// within each call: with calls of two origins in flight at once, each question still reaches
// its own caller.
func TestInputRequestsAttributedExactly(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "rounds", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "who"}, func(_ context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		res, ok := req.Params.InputResponses["who"].(*mcp.ElicitResult)
		if !ok {
			return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"who": &mcp.ElicitParams{Message: "who?",
				RequestedSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}}}`)}}}, nil, nil
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprint(res.Content["name"])}}}, nil, nil
	})
	e := newEnv(t)
	cfg := memConfig("r")
	cfg.ProtocolVersion = ProtocolAuto
	provideResponder(t, e.root, decliner())
	e.mount(nil, cfg, &hooks{dial: newMemServer(srv).dial})
	if st := e.st.waitPhase(t, "r", PhaseConnected); st.ProtocolVersion < "2026-07-28" {
		t.Fatalf("negotiated %s", st.ProtocolVersion)
	}
	var both sync.WaitGroup // each question waits until both calls are asked
	both.Add(2)
	answer := func(name string) *responder {
		return formResponder(func(context.Context, *elicitation.Request) (*elicitation.Response, error) {
			both.Done()
			both.Wait()
			return &elicitation.Response{Action: elicitation.Accept, Content: map[string]any{"name": name}}, nil
		})
	}
	got := make([]string, 2)
	var calls sync.WaitGroup
	for i, name := range []string{"one", "two"} {
		calls.Go(func() {
			cx := elicitation.WithResponder(WithOrigin(context.Background(), name), answer(name))
			res, err := e.reg.Execute(cx, e.root, "mcp__r__who", nil, toolregistry.ExecOptions{})
			if err != nil {
				t.Errorf("%s: %v", name, err)
				return
			}
			got[i] = res.Text()
		})
	}
	calls.Wait()
	if got[0] != "one" || got[1] != "two" {
		t.Fatalf("answers %q, want each caller's own", got)
	}
}

// A responder provided after the client connected (a plugin that loaded later) makes the
// client renegotiate: it waits for the request in flight to end, reconnects without
// counting a failure, and declares elicitation from then on; the next question is
// answered. A responder that goes, or one whose modes are declared already, reconnects
// nothing: a question nobody answers is declined.
func TestRenegotiatesWhenAnswersGrow(t *testing.T) {
	release := make(chan struct{})
	started := make(chan struct{}, 1)
	srv := askServer()
	mcp.AddTool(srv, &mcp.Tool{Name: "block"}, func(cx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		started <- struct{}{}
		<-release
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: capsSummary(req.Session.InitializeParams().Capabilities)}}}, nil, nil
	})
	m := newMemServer(srv)
	e := newEnv(t)
	e.mount(nil, memConfig("a"), &hooks{dial: m.dial})
	if got := e.mustCall(nil, "mcp__a__caps", "").Text(); got != "none" {
		t.Fatalf("capabilities %s, want none", got)
	}
	blocked := make(chan string, 1)
	go func() {
		res, err := e.call(nil, "mcp__a__block", "")
		if err != nil {
			blocked <- err.Error()
			return
		}
		blocked <- res.Text()
	}()
	<-started
	r := formResponder(func(context.Context, *elicitation.Request) (*elicitation.Response, error) {
		return &elicitation.Response{Action: elicitation.Accept, Content: map[string]any{"name": "Ada"}}, nil
	})
	dispose, err := elicitation.Provide(e.root, "late", r)
	if err != nil {
		t.Fatal(err)
	}
	close(release)
	if got := <-blocked; got != "none" {
		t.Fatalf("the call in flight when the responder came: %s, want it answered on its connection", got)
	}
	e.st.waitFor(t, "a", "a second connection", func(Status) bool { return m.dials.Load() == 2 && m.open.Load() == 1 })
	e.st.waitPhase(t, "a", PhaseConnected)
	if got := e.mustCall(nil, "mcp__a__caps", "").Text(); got != "elicitation(form)" {
		t.Fatalf("capabilities after the responder came: %s", got)
	}
	if got := e.mustCall(nil, "mcp__a__ask", "").Text(); got != `accept {"age":30,"name":"Ada"}` {
		t.Fatalf("answer %q", got)
	}
	for _, st := range e.st.all() {
		if st.Phase == PhaseReconnecting || st.Attempt > 0 {
			t.Fatalf("a renegotiation reported %+v, want no failure", st)
		}
	}
	if m.overlap.Load() {
		t.Fatal("the two connections overlapped")
	}
	// Another form responder declares nothing new; the last one going reconnects nothing.
	provideResponder(t, e.root, formResponder(r.Answer))
	if err := dispose(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := e.mustCall(nil, "mcp__a__caps", "").Text(); got != "elicitation(form)" || m.dials.Load() != 2 {
		t.Fatalf("capabilities %s after %d dials, want the second connection kept", got, m.dials.Load())
	}
}

// waiter answers no question: it waits until the question's context ends, and closes asked
// when the first question arrives.
type waiter struct {
	once  sync.Once
	asked chan struct{}
}

func (*waiter) Supports(elicitation.Mode) bool { return true }

func (w *waiter) Elicit(cx context.Context, _ *elicitation.Request) (*elicitation.Response, error) {
	w.once.Do(func() { close(w.asked) })
	<-cx.Done()
	return nil, cx.Err()
}

// TestCloseEndsServerQuestions: a server that asks a question and never takes it back (its
// tool ignores its own cancellation) cannot hold the client's close. The questions of a
// closing session end with it (their responders' contexts end), so the dispose returns; the
// SDK's close waits for the handlers of the server's requests.
func TestCloseEndsServerQuestions(t *testing.T) {
	e := newEnv(t)
	w := &waiter{asked: make(chan struct{})}
	if _, err := elicitation.Provide(e.root, "waiter", w); err != nil {
		t.Fatal(err)
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "stubborn", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "ask"}, func(cx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		_, err := req.Session.Elicit(context.WithoutCancel(cx), &mcp.ElicitParams{Message: "?", RequestedSchema: json.RawMessage(`{"type": "object", "properties": {"n": {"type": "string"}}}`)})
		return nil, nil, err
	})
	s := e.mount(nil, memConfig("a"), &hooks{dial: newMemServer(srv).dial})
	called := make(chan error, 1)
	go func() {
		_, err := e.call(nil, "mcp__a__ask", "{}")
		called <- err
	}()
	<-w.asked
	if err := s.Dispose(ctxtest.Wait(t)); err != nil {
		t.Fatalf("the client did not close with a question pending: %v", err)
	}
	if err := <-called; err == nil {
		t.Fatal("the call succeeded after its client closed")
	}
}
