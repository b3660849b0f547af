package mcpclient

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cordisgo/harness/ctx/ctxtest"
	"github.com/cordisgo/harness/plugins/mcpresources"
	"github.com/cordisgo/harness/plugins/toolregistry"
)

// progressServer has five tools: "steady" reports progress every `every` for `total` and
// answers "done"; "burst" reports 1 of 3, then (once firstSeen is closed: the client
// handled it) 2 and 3 of 3 at once and answers, and "short" 1 and 2 of 3; "silent" never answers and records that the server saw it cancelled; "chatty" logs
// one message at each level and answers. Resource "slow://r" is read after
// reporting progress every `every` for `total`.
type progressServer struct {
	srv       *mcp.Server
	cancelled chan struct{} // closed when "silent" saw its context end
	handled   chan struct{} // "short" answers once it is closed (the client has its notifications)
	firstSeen chan struct{} // "burst" goes on after its first notification once it is closed
}

func newProgressServer(every, total time.Duration) *progressServer {
	ps := &progressServer{cancelled: make(chan struct{}), handled: make(chan struct{}), firstSeen: make(chan struct{})}
	srv := mcp.NewServer(&mcp.Implementation{Name: "progress", Version: "1"}, &mcp.ServerOptions{
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}, Resources: &mcp.ResourceCapabilities{}, Logging: &mcp.LoggingCapabilities{}}, //nolint:staticcheck // SEP-2577: server logs stay for peers on protocol versions that have them (2025-11-25)
	})
	report := func(cx context.Context, ss *mcp.ServerSession, token any) error {
		steps := int(total / every)
		for i := 1; i <= steps; i++ {
			select {
			case <-time.After(every):
			case <-cx.Done():
				return cx.Err()
			}
			if err := ss.NotifyProgress(cx, &mcp.ProgressNotificationParams{ProgressToken: token, Progress: float64(i), Total: float64(steps),
				Message: fmt.Sprintf("step %d", i)}); err != nil {
				return err
			}
		}
		return nil
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "steady"}, func(cx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		if err := report(cx, req.Session, req.Params.GetProgressToken()); err != nil {
			return nil, nil, err
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil, nil
	})
	burst := func(steps, of int, afterFirst, wait <-chan struct{}) func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return func(cx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			for i := 1; i <= steps; i++ {
				if err := req.Session.NotifyProgress(cx, &mcp.ProgressNotificationParams{ProgressToken: req.Params.GetProgressToken(),
					Progress: float64(i), Total: float64(of)}); err != nil {
					return nil, nil, err
				}
				if i == 1 {
					select {
					case <-afterFirst:
					case <-cx.Done():
						return nil, nil, cx.Err()
					}
				}
			}
			select {
			case <-wait:
			case <-cx.Done():
				return nil, nil, cx.Err()
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil, nil
		}
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "burst"}, burst(3, 3, ps.firstSeen, closedCh))
	mcp.AddTool(srv, &mcp.Tool{Name: "short"}, burst(2, 3, closedCh, ps.handled))
	var once atomic.Bool
	mcp.AddTool(srv, &mcp.Tool{Name: "silent"}, func(cx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		<-cx.Done()
		if once.CompareAndSwap(false, true) {
			close(ps.cancelled)
		}
		return nil, nil, cx.Err()
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "chatty"}, func(cx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		for _, l := range []mcp.LoggingLevel{"debug", "info", "warning", "error"} { //nolint:staticcheck // SEP-2577: server logs stay for peers on protocol versions that have them (2025-11-25)
			if err := req.Session.Log(cx, &mcp.LoggingMessageParams{Level: l, Logger: "chat", Data: "said " + string(l)}); err != nil { //nolint:staticcheck // SEP-2577: server logs stay for peers on protocol versions that have them (2025-11-25)
				return nil, nil, err
			}
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil, nil
	})
	srv.AddResource(&mcp.Resource{URI: "slow://r", Name: "r"}, func(cx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		if err := report(cx, req.Session, req.Params.GetProgressToken()); err != nil {
			return nil, err
		}
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "slow://r", Text: "read"}}}, nil
	})
	ps.srv = srv
	return ps
}

// progressEnv mounts a client of ps with a 30 s idle timeout and the given cap.
func progressEnv(t *testing.T, ps *progressServer, maxCall time.Duration) (*env, *ctxtest.Recorder[Progress]) {
	e := newEnv(t)
	rec := ctxtest.Record(t, e.root, ProgressEvent)
	cfg := memConfig("p")
	cfg.ToolCallTimeoutMs = 30_000
	cfg.MaxToolCallMs = int(maxCall / time.Millisecond)
	cfg.LogLevel = "debug"
	e.mount(nil, cfg, &hooks{dial: newMemServer(ps.srv).dial})
	return e, rec
}

// A tool that reports progress every 5 s for two minutes completes under a 30 s idle
// timeout, and every notification becomes a ProgressEvent, then one Done event.
func TestProgressExtendsIdleDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ps := newProgressServer(5*time.Second, 2*time.Minute)
		e, rec := progressEnv(t, ps, 10*time.Minute)
		began := time.Now()
		res := e.mustCall(nil, "mcp__p__steady", "")
		if got := res.Text(); got != "done" {
			t.Fatalf("result %q, want done", got)
		}
		if took := time.Since(began); took < 2*time.Minute {
			t.Fatalf("took %v, want the whole two minutes", took)
		}
		synctest.Wait()
		evs := rec.Events()
		// The last notification, though it may be handled after the result arrived (the SDK
		// handles notifications apart from responses), comes before the done.
		if n := len(evs) - 1; n != 24 {
			t.Fatalf("%d progress events, want 24 and a done: %+v", len(evs), evs)
		}
		first, last := evs[0], evs[len(evs)-1]
		if first.Server != "p" || first.Method != "tools/call" || first.Target != "steady" || first.Progress != 1 || first.Total != 24 ||
			first.Message != "step 1" || first.CallID == "" || !strings.HasPrefix(first.Token, "harness-") {
			t.Fatalf("first event %+v", first)
		}
		if !last.Done || last.Err != "" || last.Token != first.Token {
			t.Fatalf("last event %+v, want done without error", last)
		}
	})
}

// The last notifications a server sends before its answer are emitted before the call's
// Done event even when the client handles them after the answer arrived: here the
// listener holds the second until the answer is in (the SDK's notification goroutine waits
// behind it with the third), and the third still comes before the done.
func TestLastProgressBeforeDone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t)
		gate := make(chan struct{})
		var (
			mu  sync.Mutex
			got []string
		)
		ps := newProgressServer(time.Second, time.Second)
		if _, err := ProgressEvent.On(e.root, func(p Progress) error {
			if !p.Done && p.Progress == 2 {
				<-gate
			}
			mu.Lock()
			if p.Done {
				got = append(got, "done")
			} else {
				got = append(got, fmt.Sprintf("%g/%g", p.Progress, p.Total))
			}
			mu.Unlock()
			if !p.Done && p.Progress == 1 {
				close(ps.firstSeen) // 1/3 is out: the server sends the rest and answers
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		e.mount(nil, memConfig("p"), &hooks{dial: newMemServer(ps.srv).dial})
		answered := make(chan struct{})
		go func() {
			defer close(answered)
			e.mustCall(nil, "mcp__p__burst", "")
		}()
		synctest.Wait() // the answer is in; the second notification is held, the third queued
		close(gate)
		<-answered
		mu.Lock()
		defer mu.Unlock()
		if want := []string{"1/3", "2/3", "3/3", "done"}; !slices.Equal(got, want) {
			t.Fatalf("events %v, want %v", got, want)
		}
	})
}

// A call whose last notification falls short of its total ends with its Done event as soon
// as the notifications the server sent are out: the client counts them as they are read,
// and waits for no others (it waited progressGrace for the one reaching the total).
func TestShortProgressEndsWithoutWaiting(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ps := newProgressServer(time.Second, time.Second)
		e, rec := progressEnv(t, ps, time.Minute)
		if _, err := ProgressEvent.On(e.root, func(p Progress) error {
			if p.Progress == 2 {
				close(ps.handled) // the server answers once the client has both notifications
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		began := time.Now()
		e.mustCall(nil, "mcp__p__short", "")
		if took := time.Since(began); took != 0 {
			t.Errorf("the call took %v of the fake clock, want no wait", took)
		}
		evs := rec.Events()
		if len(evs) != 3 || evs[1].Progress != 2 || !evs[2].Done {
			t.Fatalf("events %+v", evs)
		}
	})
}

// A silent call ends at its idle timeout with a timeout error, and the server sees the
// request cancelled (notifications/cancelled).
func TestSilentCallEndsAtIdleTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ps := newProgressServer(5*time.Second, 2*time.Minute)
		e, rec := progressEnv(t, ps, 10*time.Minute)
		began := time.Now()
		_, err := e.call(nil, "mcp__p__silent", "")
		if took := time.Since(began); took != 30*time.Second {
			t.Fatalf("took %v, want exactly the 30 s idle timeout", took)
		}
		if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "no answer and no progress for 30s (toolCallTimeoutMs)") {
			t.Fatalf("err = %v, want the idle timeout", err)
		}
		<-ps.cancelled
		synctest.Wait()
		if evs := rec.Events(); len(evs) != 0 {
			t.Fatalf("a silent call emitted %+v", evs)
		}
	})
}

// Progress never extends a call past maxToolCallMs.
func TestProgressCappedByMaxToolCall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ps := newProgressServer(5*time.Second, 2*time.Minute)
		e, rec := progressEnv(t, ps, time.Minute)
		began := time.Now()
		_, err := e.call(nil, "mcp__p__steady", "")
		if took := time.Since(began); took != time.Minute {
			t.Fatalf("took %v, want the one-minute cap", took)
		}
		var te *toolregistry.ToolError
		if !errors.As(err, &te) || te.Code != toolregistry.CodeTimeout {
			t.Fatalf("err = %v, want a registry timeout", err)
		}
		synctest.Wait()
		evs := rec.Events()
		if last := evs[len(evs)-1]; !last.Done || last.Err == "" {
			t.Fatalf("last event %+v, want done with an error", last)
		}
	})
}

// A resource read carries a progress token too, and progress keeps it alive past the idle
// timeout.
func TestResourceReadProgress(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ps := newProgressServer(5*time.Second, time.Minute)
		e := newEnv(t)
		ctxtest.MountActive(t, e.root, mcpresources.Plugin, nil)
		rec := ctxtest.Record(t, e.root, ProgressEvent)
		cfg := memConfig("p")
		cfg.ToolCallTimeoutMs = 30_000
		e.mount(nil, cfg, &hooks{dial: newMemServer(ps.srv).dial})
		// The client's resource provider is a sub-scope of its own, loaded once the client
		// is active (it injects mcpresources): the read tool exists once the tree settled.
		ctxtest.Settle(t, e.root)
		res := e.mustCall(nil, mcpresources.ToolRead, `{"server":"p","uri":"slow://r"}`)
		if !strings.Contains(res.Text(), "read") {
			t.Fatalf("read %q", res.Text())
		}
		synctest.Wait()
		evs := rec.Events()
		if n := len(evs); (n != 12 && n != 13) || evs[0].Method != "resources/read" || evs[0].Target != "slow://r" || !evs[n-1].Done {
			t.Fatalf("events %+v", evs)
		}
	})
}

// Server log messages reach slog with the server's name and the mapped level, after
// logging/setLevel with the configured level.
func TestServerLogMessages(t *testing.T) {
	ps := newProgressServer(time.Millisecond, time.Millisecond)
	var level atomic.Value
	ps.srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(cx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "logging/setLevel" {
				level.Store(string(req.GetParams().(*mcp.SetLoggingLevelParams).Level)) //nolint:staticcheck // SEP-2577: server logs stay for peers on protocol versions that have them (2025-11-25)
			}
			return next(cx, method, req)
		}
	})
	e, _ := progressEnv(t, ps, time.Minute)
	rec := ctxtest.Record(t, e.root, ServerLogEvent)
	e.mustCall(nil, "mcp__p__chatty", "")
	if got := level.Load(); got != "debug" {
		t.Fatalf("logging/setLevel %v, want debug", got)
	}
	rec.WaitFor(t, func(l []ServerLog) bool { return len(l) == 4 })
	want := map[string]slog.Level{"said debug": slog.LevelDebug, "said info": slog.LevelInfo, "said warning": slog.LevelWarn, "said error": slog.LevelError}
	found := 0
	for _, lv := range []slog.Level{slog.LevelDebug, slog.LevelInfo, slog.LevelWarn, slog.LevelError} {
		for _, r := range e.log.Records(lv) {
			if r.Level != lv || !strings.HasPrefix(r.Message, "mcp server log: ") {
				continue
			}
			text := strings.TrimPrefix(r.Message, "mcp server log: ")
			if want[text] != lv {
				t.Errorf("%q logged at %v, want %v", text, lv, want[text])
			}
			server := ""
			r.Attrs(func(a slog.Attr) bool {
				if a.Key == "server" {
					server = a.Value.String()
				}
				return true
			})
			if server != "p" {
				t.Errorf("%q has server %q", text, server)
			}
			found++
		}
	}
	if found != 4 {
		t.Fatalf("found %d server log records, want 4:\n%s", found, e.log)
	}
}

func TestProtocolConfigValidation(t *testing.T) {
	cfg := memConfig("p")
	cfg.LogLevel = "loud"
	cfg.MaxToolCallMs = 0
	err := cfg.Validate()
	for _, key := range []string{`"logLevel"`, `"maxToolCallMs"`} {
		if err == nil || !strings.Contains(err.Error(), key) {
			t.Errorf("Validate() = %v, want a problem naming %s", err, key)
		}
	}
	cfg = memConfig("p")
	cfg.ToolCallTimeoutMs, cfg.MaxToolCallMs = 900_000, 600_000
	if got := cfg.MaxToolCall(); got != 15*time.Minute {
		t.Fatalf("MaxToolCall() = %v, want the idle timeout when it is longer", got)
	}
}

// An HTTP transport's reading side counts each progress notification, by the token the
// server sent, before it shims the message; other messages are not counted.
func TestHTTPReadCountsProgress(t *testing.T) {
	var read []any
	rewrite := dialOptions{onProgressRead: func(token any) { read = append(read, token) }}.rewrite()
	for _, msg := range []string{
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"harness-7","progress":1,"total":3}}`,
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":12,"progress":2}}`,
		`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"notifications/progress"}}`,
		`{"jsonrpc":"2.0","id":4,"result":{"content":[{"type":"text","text":"\"notifications/progress\""}]}}`,
	} {
		if got := rewrite([]byte(msg)); string(got) != msg {
			t.Errorf("rewrite changed %s into %s", msg, got)
		}
	}
	if want := []any{"harness-7", float64(12)}; !reflect.DeepEqual(read, want) {
		t.Fatalf("counted %v, want %v", read, want)
	}
	if tokenKey(read[1]) != tokenKey(float64(12)) {
		t.Fatalf("a numeric token's key %q", tokenKey(read[1]))
	}
}
