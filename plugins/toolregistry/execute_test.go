package toolregistry_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/ctx/ctxtest"
	"github.com/cordisgo/harness/permission"
	"github.com/cordisgo/harness/plugins/toolregistry"
	"github.com/cordisgo/harness/testkit/regtest"
)

var sentinels = map[toolregistry.Code]error{
	toolregistry.CodeUnknownTool:   toolregistry.ErrUnknownTool,
	toolregistry.CodeInvalidArgs:   toolregistry.ErrInvalidArgs,
	toolregistry.CodeDenied:        toolregistry.ErrDenied,
	toolregistry.CodeTimeout:       toolregistry.ErrTimeout,
	toolregistry.CodeCancelled:     toolregistry.ErrCancelled,
	toolregistry.CodeToolError:     toolregistry.ErrToolError,
	toolregistry.CodeInvalidOutput: toolregistry.ErrInvalidOutput,
	toolregistry.CodePanic:         toolregistry.ErrPanic,
}

// checkOutcome asserts that res and err describe outcome want, with text in the result.
func checkOutcome(t *testing.T, res *toolregistry.Result, err error, want toolregistry.Code, text string) {
	t.Helper()
	if res == nil {
		t.Fatalf("nil result (err %v)", err)
	}
	if want == toolregistry.CodeOK {
		if err != nil || res.IsError {
			t.Fatalf("err %v, IsError %v; want success", err, res.IsError)
		}
	} else {
		var te *toolregistry.ToolError
		if !errors.As(err, &te) || te.Code != want {
			t.Fatalf("err %v; want a ToolError with code %s", err, want)
		}
		for code, s := range sentinels {
			if errors.Is(err, s) != (code == want) {
				t.Fatalf("errors.Is(err, %s sentinel) = %v", code, code != want)
			}
		}
		if !res.IsError {
			t.Fatalf("failed call returned a result without IsError: %+v", res)
		}
	}
	if !strings.Contains(res.Text(), text) {
		t.Fatalf("result text %q does not contain %q", res.Text(), text)
	}
}

func echoArgs(_ context.Context, call *toolregistry.Call) (*toolregistry.Result, error) {
	return toolregistry.TextResult(string(call.Args)), nil
}

func blockUntilDone(cx context.Context, _ *toolregistry.Call) (*toolregistry.Result, error) {
	<-cx.Done()
	return nil, cx.Err()
}

func TestExecutePipeline(t *testing.T) {
	type policyFn = func(*toolregistry.PolicyRequest, func() (permission.Decision, error)) (permission.Decision, error)
	decide := func(d permission.Decision) policyFn {
		return func(*toolregistry.PolicyRequest, func() (permission.Decision, error)) (permission.Decision, error) {
			return d, nil
		}
	}
	approver := func(a toolregistry.Approval, err error) toolregistry.Approver {
		return toolregistry.ApproverFunc(func(context.Context, *toolregistry.PolicyRequest, string) (toolregistry.Approval, error) {
			return a, err
		})
	}
	params := json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}`)
	outSchema := json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`)
	structured := func(s string) func(context.Context, *toolregistry.Call) (*toolregistry.Result, error) {
		return func(context.Context, *toolregistry.Call) (*toolregistry.Result, error) {
			return &toolregistry.Result{Content: []toolregistry.Content{toolregistry.Text("done")}, Structured: json.RawMessage(s)}, nil
		}
	}
	cancelledcx, cancel := context.WithCancel(context.Background())
	cancel()
	waitcx, stopWaiting := context.WithCancel(context.Background())
	defer stopWaiting()
	approvingcx, stopApproving := context.WithCancel(context.Background())
	defer stopApproving()

	tests := []struct {
		name     string
		tool     toolregistry.Tool // registered as "t" unless named
		call     string            // defaults to "t"
		args     string
		policy   policyFn
		approver toolregistry.Approver
		context  context.Context
		want     toolregistry.Code
		text     string
		ran      bool // whether the tool's Execute must have run
	}{
		// 1. lookup
		{name: "ok", tool: toolregistry.Tool{Execute: echoArgs}, args: `{"a":1}`, want: toolregistry.CodeOK, text: `{"a":1}`, ran: true},
		{name: "empty args become {}", tool: toolregistry.Tool{Execute: echoArgs}, want: toolregistry.CodeOK, text: `{}`, ran: true},
		{name: "whitespace around args", tool: toolregistry.Tool{Execute: echoArgs}, args: " \n{\"a\":1} ", want: toolregistry.CodeOK, text: `{"a":1}`, ran: true},
		{name: "whitespace-only args become {}", tool: toolregistry.Tool{Execute: echoArgs}, args: "  ", want: toolregistry.CodeOK, text: `{}`, ran: true},
		{name: "unknown tool", tool: toolregistry.Tool{Execute: echoArgs}, call: "nope", want: toolregistry.CodeUnknownTool, text: `Error: unknown tool "nope"`},
		// 2. arguments
		{name: "args not an object", tool: toolregistry.Tool{Execute: echoArgs}, args: `[1]`, want: toolregistry.CodeInvalidArgs, text: "not a JSON object"},
		{name: "args a string", tool: toolregistry.Tool{Execute: echoArgs}, args: `"x"`, want: toolregistry.CodeInvalidArgs, text: "not a JSON object"},
		{name: "args not JSON", tool: toolregistry.Tool{Execute: echoArgs}, args: `{"a":`, want: toolregistry.CodeInvalidArgs, text: "invalid arguments"},
		{name: "args miss a required property", tool: toolregistry.Tool{Execute: echoArgs, Parameters: params}, args: `{}`, want: toolregistry.CodeInvalidArgs, text: "invalid arguments"},
		{name: "args of the wrong type", tool: toolregistry.Tool{Execute: echoArgs, Parameters: params}, args: `{"q":3}`, want: toolregistry.CodeInvalidArgs, text: "invalid arguments"},
		{name: "empty properties accept any object", tool: toolregistry.Tool{Execute: echoArgs, Parameters: json.RawMessage(`{"type":"object","properties":{}}`)},
			args: `{"x":1}`, want: toolregistry.CodeOK, text: `{"x":1}`, ran: true},
		{name: "no additional properties", tool: toolregistry.Tool{Execute: echoArgs, Parameters: json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`)},
			args: `{"x":1}`, want: toolregistry.CodeInvalidArgs, text: "invalid arguments"},
		{name: "args valid against the schema", tool: toolregistry.Tool{Execute: echoArgs, Parameters: params}, args: `{"q":"x"}`, want: toolregistry.CodeOK, text: `{"q":"x"}`, ran: true},
		// 3. policy and approval
		{name: "policy allows", tool: toolregistry.Tool{Execute: echoArgs}, policy: decide(permission.Decision{Action: permission.Allow}), want: toolregistry.CodeOK, ran: true},
		{name: "policy denies", tool: toolregistry.Tool{Execute: echoArgs}, policy: decide(permission.Decision{Action: permission.Deny, Reason: "no network"}),
			want: toolregistry.CodeDenied, text: "Error: denied: no network"},
		{name: "policy denies without reason", tool: toolregistry.Tool{Execute: echoArgs}, policy: decide(permission.Decision{Action: permission.Deny}),
			want: toolregistry.CodeDenied, text: "denied by policy"},
		{name: "policy returns no action", tool: toolregistry.Tool{Execute: echoArgs}, policy: decide(permission.Decision{}),
			want: toolregistry.CodeDenied, text: "invalid action"},
		{name: "policy fails", tool: toolregistry.Tool{Execute: echoArgs},
			policy: func(*toolregistry.PolicyRequest, func() (permission.Decision, error)) (permission.Decision, error) {
				return permission.Decision{}, errors.New("rules unreadable")
			}, want: toolregistry.CodeDenied, text: "policy failed: rules unreadable"},
		{name: "policy panics", tool: toolregistry.Tool{Execute: echoArgs},
			policy: func(*toolregistry.PolicyRequest, func() (permission.Decision, error)) (permission.Decision, error) {
				panic("bad rule")
			}, want: toolregistry.CodeDenied, text: "bad rule"},
		{name: "ask without an approval service", tool: toolregistry.Tool{Execute: echoArgs}, policy: decide(permission.Decision{Action: permission.Ask, Reason: "writes files"}),
			want: toolregistry.CodeDenied, text: "approval required (writes files) but no approval service is mounted"},
		{name: "ask, approved", tool: toolregistry.Tool{Execute: echoArgs}, policy: decide(permission.Decision{Action: permission.Ask}),
			approver: approver(toolregistry.Approval{Approved: true}, nil), want: toolregistry.CodeOK, ran: true},
		{name: "ask, refused", tool: toolregistry.Tool{Execute: echoArgs}, policy: decide(permission.Decision{Action: permission.Ask}),
			approver: approver(toolregistry.Approval{Reason: "user said no"}, nil), want: toolregistry.CodeDenied, text: "denied by approver: user said no"},
		{name: "ask, refused without a reason", tool: toolregistry.Tool{Execute: echoArgs}, policy: decide(permission.Decision{Action: permission.Ask}),
			approver: approver(toolregistry.Approval{}, nil), want: toolregistry.CodeDenied, text: "denied by approver: not approved"},
		{name: "ask, approver panics", tool: toolregistry.Tool{Execute: echoArgs}, policy: decide(permission.Decision{Action: permission.Ask}),
			approver: toolregistry.ApproverFunc(func(context.Context, *toolregistry.PolicyRequest, string) (toolregistry.Approval, error) {
				panic("approver bug")
			}), want: toolregistry.CodeDenied, text: "approval failed: panic: approver bug"},
		{name: "ask, approver fails", tool: toolregistry.Tool{Execute: echoArgs}, policy: decide(permission.Decision{Action: permission.Ask}),
			approver: approver(toolregistry.Approval{Approved: true}, errors.New("channel closed")), want: toolregistry.CodeDenied, text: "approval failed: channel closed"},
		{name: "ask, cancelled while waiting", tool: toolregistry.Tool{Execute: echoArgs}, policy: decide(permission.Decision{Action: permission.Ask}),
			approver: toolregistry.ApproverFunc(func(cx context.Context, _ *toolregistry.PolicyRequest, _ string) (toolregistry.Approval, error) {
				stopWaiting() // the user walks away
				<-cx.Done()
				return toolregistry.Approval{}, cx.Err()
			}), context: waitcx, want: toolregistry.CodeCancelled, text: "waiting for approval"},
		{name: "cancelled during an approval that succeeds", tool: toolregistry.Tool{Execute: echoArgs}, policy: decide(permission.Decision{Action: permission.Ask}),
			approver: toolregistry.ApproverFunc(func(context.Context, *toolregistry.PolicyRequest, string) (toolregistry.Approval, error) {
				stopApproving()
				return toolregistry.Approval{Approved: true}, nil
			}), context: approvingcx, want: toolregistry.CodeCancelled, text: "cancelled before dispatch"},
		{name: "cancelled before the policy", tool: toolregistry.Tool{Execute: echoArgs},
			policy: func(*toolregistry.PolicyRequest, func() (permission.Decision, error)) (permission.Decision, error) {
				panic("the policy must not be consulted")
			}, context: cancelledcx, want: toolregistry.CodeCancelled, text: "cancelled before dispatch"},
		{name: "cancelled before dispatch", tool: toolregistry.Tool{Execute: echoArgs}, context: cancelledcx, want: toolregistry.CodeCancelled, text: "cancelled before dispatch"},
		// 4. execution
		{name: "tool returns an error", tool: toolregistry.Tool{Execute: func(context.Context, *toolregistry.Call) (*toolregistry.Result, error) {
			return nil, errors.New("disk full")
		}}, want: toolregistry.CodeToolError, text: "Error: disk full", ran: true},
		{name: "tool returns an error result", tool: toolregistry.Tool{Execute: func(context.Context, *toolregistry.Call) (*toolregistry.Result, error) {
			return toolregistry.ErrorResult("repository not found"), nil
		}}, want: toolregistry.CodeToolError, text: "repository not found", ran: true},
		{name: "tool returns an empty error result", tool: toolregistry.Tool{Execute: func(context.Context, *toolregistry.Call) (*toolregistry.Result, error) {
			return &toolregistry.Result{IsError: true}, nil
		}}, want: toolregistry.CodeToolError, ran: true},
		{name: "tool returns nil", tool: toolregistry.Tool{Execute: func(context.Context, *toolregistry.Call) (*toolregistry.Result, error) {
			return nil, nil
		}}, want: toolregistry.CodeOK, ran: true},
		{name: "tool panics", tool: toolregistry.Tool{Execute: func(context.Context, *toolregistry.Call) (*toolregistry.Result, error) {
			panic("nil map")
		}}, want: toolregistry.CodePanic, text: "panicked: nil map", ran: true},
		{name: "projection panics", tool: toolregistry.Tool{Execute: echoArgs, Project: func(*toolregistry.Result) []toolregistry.Content {
			panic("bad block")
		}}, want: toolregistry.CodePanic, text: "bad block", ran: true},
		{name: "projection replaces content", tool: toolregistry.Tool{
			Execute: func(context.Context, *toolregistry.Call) (*toolregistry.Result, error) {
				return &toolregistry.Result{Raw: json.RawMessage(`{"content":[{"type":"text","text":"raw"}]}`)}, nil
			},
			Project: func(r *toolregistry.Result) []toolregistry.Content {
				return []toolregistry.Content{toolregistry.Text("projected from " + string(r.Raw[:11]))}
			}}, want: toolregistry.CodeOK, text: `projected from {"content"`, ran: true},
		{name: "timeout", tool: toolregistry.Tool{Execute: blockUntilDone, Timeout: time.Millisecond},
			want: toolregistry.CodeTimeout, text: "Error: timed out after 1ms", ran: true},
		{name: "timeout reported as an error result", tool: toolregistry.Tool{Timeout: time.Millisecond,
			Execute: func(cx context.Context, _ *toolregistry.Call) (*toolregistry.Result, error) {
				<-cx.Done()
				return toolregistry.ErrorResult("request aborted"), nil
			}}, want: toolregistry.CodeTimeout, text: "timed out", ran: true},
		{name: "no timeout", tool: toolregistry.Tool{Timeout: -1,
			Execute: func(cx context.Context, _ *toolregistry.Call) (*toolregistry.Result, error) {
				if _, ok := cx.Deadline(); ok {
					return nil, errors.New("has a deadline")
				}
				return toolregistry.TextResult("no deadline"), nil
			}}, want: toolregistry.CodeOK, text: "no deadline", ran: true},
		// 5. output validation
		{name: "structured output valid", tool: toolregistry.Tool{Execute: structured(`{"n":3}`), OutputSchema: outSchema}, want: toolregistry.CodeOK, text: "done", ran: true},
		{name: "structured output missing", tool: toolregistry.Tool{Execute: echoArgs, OutputSchema: outSchema},
			want: toolregistry.CodeInvalidOutput, text: "structured content is required", ran: true},
		{name: "structured output invalid", tool: toolregistry.Tool{Execute: structured(`{"n":"three"}`), OutputSchema: outSchema},
			want: toolregistry.CodeInvalidOutput, text: "returned invalid output", ran: true},
		{name: "structured output not JSON", tool: toolregistry.Tool{Execute: structured(`{"n":`), OutputSchema: outSchema},
			want: toolregistry.CodeInvalidOutput, text: "not valid JSON", ran: true},
		{name: "structured output without a schema", tool: toolregistry.Tool{Execute: structured(`{"anything":true}`)}, want: toolregistry.CodeOK, ran: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root, reg := newRegistry(t, nil)
			executed := ctxtest.Record(t, root, toolregistry.Executed)
			var ran atomic.Bool
			tl := tc.tool
			tl.Name = "t"
			exec := tl.Execute
			tl.Execute = func(cx context.Context, call *toolregistry.Call) (*toolregistry.Result, error) {
				ran.Store(true)
				return exec(cx, call)
			}
			if _, err := reg.Register(root, tl); err != nil {
				t.Fatal(err)
			}
			if tc.policy != nil {
				if _, err := toolregistry.Policy.On(root, tc.policy); err != nil {
					t.Fatal(err)
				}
			}
			if tc.approver != nil {
				if _, err := toolregistry.ApprovalKey.Provide(root, tc.approver); err != nil {
					t.Fatal(err)
				}
			}
			call := tc.call
			if call == "" {
				call = "t"
			}
			var args json.RawMessage
			if tc.args != "" {
				args = json.RawMessage(tc.args)
			}
			res, err := reg.Execute(tc.context, root, call, args, toolregistry.ExecOptions{CallID: "c1"})
			checkOutcome(t, res, err, tc.want, tc.text)
			if ran.Load() != tc.ran {
				t.Fatalf("tool ran: %v, want %v", ran.Load(), tc.ran)
			}
			hist := reg.History()
			if len(hist) != 1 {
				t.Fatalf("%d records", len(hist))
			}
			rec := hist[0]
			if rec.Outcome != tc.want || rec.CallID != "c1" || rec.Tool != call || rec.ScopeName != "root" ||
				rec.Scope != root.Scope() || string(rec.Args) != tc.args || rec.Result != res || rec.Started.IsZero() {
				t.Fatalf("record %+v", rec)
			}
			if (rec.Err == nil) != (tc.want == toolregistry.CodeOK) || (rec.Err != nil && error(rec.Err) != err) { //nolint:errorlint // the very error returned
				t.Fatalf("record error %v, returned %v", rec.Err, err)
			}
			if evs := executed.Events(); len(evs) != 1 || evs[0].CallID != "c1" || evs[0].Outcome != tc.want {
				t.Fatalf("executed events %+v", evs)
			}
		})
	}
}

func TestDefaultTimeout(t *testing.T) {
	root, reg := newRegistry(t, map[string]any{"defaultTimeoutMs": 1})
	if _, err := reg.Register(root, toolregistry.Tool{Name: "slow", Execute: blockUntilDone}); err != nil {
		t.Fatal(err)
	}
	res, err := reg.Execute(root, root, "slow", nil, toolregistry.ExecOptions{})
	checkOutcome(t, res, err, toolregistry.CodeTimeout, "timed out after 1ms")
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("%v does not wrap context.DeadlineExceeded", err)
	}
}

// registerBlock registers a tool "block" that runs until its call ends, and returns a
// channel closed when its (one) call has started.
func registerBlock(t *testing.T, root *ctx.Context, reg *toolregistry.Registry) <-chan struct{} {
	t.Helper()
	started := make(chan struct{})
	if _, err := reg.Register(root, toolregistry.Tool{Name: "block",
		Execute: func(cx context.Context, call *toolregistry.Call) (*toolregistry.Result, error) {
			close(started)
			return blockUntilDone(cx, call)
		}}); err != nil {
		t.Fatal(err)
	}
	return started
}

func TestCancelDuringExecution(t *testing.T) {
	root, reg := newRegistry(t, nil)
	started := registerBlock(t, root, reg)
	cx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := regtest.Start(cx, reg, root, "block", nil, toolregistry.ExecOptions{})
	<-started
	cancel()
	o := <-done
	checkOutcome(t, o.Res, o.Err, toolregistry.CodeCancelled, "Error: cancelled: context canceled")
	if !errors.Is(o.Err, context.Canceled) {
		t.Fatalf("%v does not wrap context.Canceled", o.Err)
	}
}

func TestCallerUnloadCancels(t *testing.T) {
	root, reg := newRegistry(t, nil)
	started := registerBlock(t, root, reg)
	agent := ctxtest.MountActive(t, root, plugin("agent", func(*ctx.Context, *toolregistry.Registry) error { return nil }), nil)
	c := scopeCtx(t, agent)
	done := regtest.Start(c, reg, c, "block", nil, toolregistry.ExecOptions{})
	<-started
	if err := agent.Dispose(ctxtest.Wait(t)); err != nil {
		t.Fatal(err)
	}
	err := (<-done).Err
	if !errors.Is(err, toolregistry.ErrCancelled) || !errors.Is(err, context.Canceled) {
		t.Fatalf("call of an unloaded caller: %v, want cancelled", err)
	}
	if rec := reg.History()[0]; rec.Outcome != toolregistry.CodeCancelled || rec.ScopeName != "agent" {
		t.Fatalf("record %+v", rec)
	}
}

func TestCallContents(t *testing.T) {
	root, reg := newRegistry(t, nil)
	got := make(chan toolregistry.Call, 1) // a copy: the Call is the execution's
	values := make(chan any, 1)
	type key struct{}
	if _, err := reg.Register(root, toolregistry.Tool{Name: "probe",
		Execute: func(cx context.Context, call *toolregistry.Call) (*toolregistry.Result, error) {
			got <- *call
			values <- cx.Value(key{})
			return nil, nil
		}}); err != nil {
		t.Fatal(err)
	}
	cx := context.WithValue(context.Background(), key{}, "v")
	if _, err := reg.Execute(cx, root, "probe", json.RawMessage(`{"x":1}`), toolregistry.ExecOptions{}); err != nil {
		t.Fatal(err)
	}
	call := <-got
	if !strings.HasPrefix(call.ID, "call_") || call.Tool != "probe" || string(call.Args) != `{"x":1}` ||
		call.Caller != root || call.Attachments != reg.Attachments() {
		t.Fatalf("call %+v", call)
	}
	if v := <-values; v != "v" {
		t.Fatalf("the tool's context lacks the caller's values: %v", v)
	}
	if _, err := reg.Execute(root, root, "probe", nil, toolregistry.ExecOptions{}); err != nil {
		t.Fatal(err)
	}
	if next := <-got; next.ID == call.ID {
		t.Fatalf("call ids repeat: %s", next.ID)
	}
	<-values
}

func TestPolicyRequest(t *testing.T) {
	root, reg := newRegistry(t, nil)
	var calls atomic.Int32
	if _, err := reg.Register(root, toolregistry.Tool{Name: "t", Execute: echoArgs, Meta: map[string]string{"server": "gh"},
		Parameters: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}}}`)}); err != nil {
		t.Fatal(err)
	}
	var seen []string
	// Two listeners: the outer one sees what the inner one decided.
	if _, err := toolregistry.Policy.On(root, func(req *toolregistry.PolicyRequest, next func() (permission.Decision, error)) (permission.Decision, error) {
		calls.Add(1)
		seen = append(seen, req.CallID, req.Tool.Name, req.Tool.Meta["server"], string(req.Args), req.Caller.Scope().Name())
		d, err := next()
		seen = append(seen, string(d.Action))
		return d, err
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := toolregistry.Policy.On(root, func(req *toolregistry.PolicyRequest, next func() (permission.Decision, error)) (permission.Decision, error) {
		if strings.Contains(string(req.Args), "secret") {
			return permission.Decision{Action: permission.Deny, Reason: "secrets"}, nil
		}
		return next()
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := reg.Execute(root, root, "t", json.RawMessage(`{"q":"hi"}`), toolregistry.ExecOptions{CallID: "c9"}); err != nil {
		t.Fatal(err)
	}
	if want := []string{"c9", "t", "gh", `{"q":"hi"}`, "root", "allow"}; strings.Join(seen, "|") != strings.Join(want, "|") {
		t.Fatalf("policy saw %q, want %q", seen, want)
	}
	if _, err := reg.Execute(root, root, "t", json.RawMessage(`{"q":"secret"}`), toolregistry.ExecOptions{}); !errors.Is(err, toolregistry.ErrDenied) {
		t.Fatalf("second listener's deny: %v", err)
	}
	// Invalid arguments never reach the policy.
	calls.Store(0)
	if _, err := reg.Execute(root, root, "t", json.RawMessage(`{"q":1}`), toolregistry.ExecOptions{}); !errors.Is(err, toolregistry.ErrInvalidArgs) {
		t.Fatal(err)
	}
	if calls.Load() != 0 {
		t.Fatal("the policy saw invalid arguments")
	}
}

func TestSubtreePolicy(t *testing.T) {
	root, reg := newRegistry(t, nil)
	if _, err := reg.Register(root, reply("shell", "ran")); err != nil {
		t.Fatal(err)
	}
	sandboxed := plugin("sandboxed", func(c *ctx.Context, _ *toolregistry.Registry) error {
		_, err := toolregistry.Policy.On(c, func(req *toolregistry.PolicyRequest, next func() (permission.Decision, error)) (permission.Decision, error) {
			return permission.Decision{Action: permission.Deny, Reason: "sandboxed agent"}, nil
		}, ctx.Subtree)
		return err
	})
	free := plugin("free", func(*ctx.Context, *toolregistry.Registry) error { return nil })
	sc := scopeCtx(t, ctxtest.MountActive(t, root, sandboxed, nil))
	fc := scopeCtx(t, ctxtest.MountActive(t, root, free, nil))
	if _, err := exec(t, reg, sc, "shell", ""); !errors.Is(err, toolregistry.ErrDenied) || !strings.Contains(err.Error(), "sandboxed agent") {
		t.Fatalf("sandboxed call: %v", err)
	}
	for _, c := range []*ctx.Context{fc, root} {
		if got, err := exec(t, reg, c, "shell", ""); err != nil || got != "ran" {
			t.Fatalf("call from %s: %q, %v", c.Scope().Name(), got, err)
		}
	}
}

func TestApproverSeesRequest(t *testing.T) {
	root, reg := newRegistry(t, nil)
	if _, err := reg.Register(root, reply("rm", "removed")); err != nil {
		t.Fatal(err)
	}
	if _, err := toolregistry.Policy.On(root, func(*toolregistry.PolicyRequest, func() (permission.Decision, error)) (permission.Decision, error) {
		return permission.Decision{Action: permission.Ask, Reason: "destructive"}, nil
	}); err != nil {
		t.Fatal(err)
	}
	asked := make(chan string, 1)
	approval := plugin("approval", func(c *ctx.Context, _ *toolregistry.Registry) error {
		_, err := toolregistry.ApprovalKey.Provide(c, toolregistry.ApproverFunc(
			func(_ context.Context, req *toolregistry.PolicyRequest, reason string) (toolregistry.Approval, error) {
				asked <- req.Tool.Name + ": " + reason
				return toolregistry.Approval{Approved: true}, nil
			}))
		return err
	})
	s := ctxtest.MountActive(t, root, approval, nil)
	if got, err := exec(t, reg, root, "rm", ""); err != nil || got != "removed" {
		t.Fatalf("approved call: %q, %v", got, err)
	}
	if got := <-asked; got != "rm: destructive" {
		t.Fatalf("approver asked %q", got)
	}
	// Once the approval service goes, asking denies.
	if err := s.Dispose(ctxtest.Wait(t)); err != nil {
		t.Fatal(err)
	}
	if _, err := exec(t, reg, root, "rm", ""); !errors.Is(err, toolregistry.ErrDenied) {
		t.Fatalf("without approver: %v", err)
	}
}

// TestExecOptionsSessionAndApprover: the session and the approver a caller passes reach
// the policy chain, the approver and the tool as given, and the approver passed wins over
// the ApprovalKey service.
func TestExecOptionsSessionAndApprover(t *testing.T) {
	type who struct{ name string }
	root, reg := newRegistry(t, nil)
	var seen []any
	var mu sync.Mutex
	note := func(v any) { mu.Lock(); seen = append(seen, v); mu.Unlock() }
	if _, err := reg.Register(root, toolregistry.Tool{Name: "rm", Execute: func(_ context.Context, call *toolregistry.Call) (*toolregistry.Result, error) {
		note(call.Session)
		return toolregistry.TextResult("removed"), nil
	}}); err != nil {
		t.Fatal(err)
	}
	if _, err := toolregistry.Policy.On(root, func(req *toolregistry.PolicyRequest, _ func() (permission.Decision, error)) (permission.Decision, error) {
		note(req.Session)
		return permission.Decision{Action: permission.Ask}, nil
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := toolregistry.ApprovalKey.Provide(root, toolregistry.ApproverFunc(func(context.Context, *toolregistry.PolicyRequest, string) (toolregistry.Approval, error) {
		return toolregistry.Approval{Reason: "the service says no"}, nil
	})); err != nil {
		t.Fatal(err)
	}
	me := &who{"me"}
	mine := toolregistry.ApproverFunc(func(_ context.Context, req *toolregistry.PolicyRequest, _ string) (toolregistry.Approval, error) {
		note(req.Session)
		return toolregistry.Approval{Approved: true}, nil
	})
	res, err := reg.Execute(context.Background(), root, "rm", nil, toolregistry.ExecOptions{Session: me, Approver: mine})
	if err != nil || res.Text() != "removed" {
		t.Fatalf("with the caller's approver: %v, %v", res, err)
	}
	if len(seen) != 3 || seen[0] != me || seen[1] != me || seen[2] != me {
		t.Fatalf("policy, approver and tool saw %v, want the session three times", seen)
	}
	if _, err := reg.Execute(context.Background(), root, "rm", nil, toolregistry.ExecOptions{}); !errors.Is(err, toolregistry.ErrDenied) || !strings.Contains(err.Error(), "the service says no") {
		t.Fatalf("without an approver in the options the service answers: %v", err)
	}
}

func TestPostExecute(t *testing.T) {
	type listener = func(*toolregistry.Record, func() (*toolregistry.Result, error)) (*toolregistry.Result, error)
	failing := func(context.Context, *toolregistry.Call) (*toolregistry.Result, error) {
		return nil, errors.New("boom")
	}
	tests := []struct {
		name     string
		execute  func(context.Context, *toolregistry.Call) (*toolregistry.Result, error)
		listener listener
		want     toolregistry.Code
		text     string
	}{
		{"pass through", echoArgs, func(_ *toolregistry.Record, next func() (*toolregistry.Result, error)) (*toolregistry.Result, error) {
			return next()
		}, toolregistry.CodeOK, "{}"},
		{"replace content", echoArgs, func(_ *toolregistry.Record, next func() (*toolregistry.Result, error)) (*toolregistry.Result, error) {
			r, err := next()
			return toolregistry.TextResult("redacted " + r.Text()), err
		}, toolregistry.CodeOK, "redacted {}"},
		{"block a success", echoArgs, func(*toolregistry.Record, func() (*toolregistry.Result, error)) (*toolregistry.Result, error) {
			return toolregistry.ErrorResult("blocked: output contains a token"), nil
		}, toolregistry.CodeToolError, "blocked: output contains a token"},
		{"listener fails", echoArgs, func(*toolregistry.Record, func() (*toolregistry.Result, error)) (*toolregistry.Result, error) {
			return nil, errors.New("scanner down")
		}, toolregistry.CodeToolError, "Error: post-execute: scanner down"},
		{"listener panics", echoArgs, func(*toolregistry.Record, func() (*toolregistry.Result, error)) (*toolregistry.Result, error) {
			panic("oops")
		}, toolregistry.CodeToolError, "post-execute: panic: oops"},
		{"block a success without a message", echoArgs, func(*toolregistry.Record, func() (*toolregistry.Result, error)) (*toolregistry.Result, error) {
			return &toolregistry.Result{IsError: true}, nil
		}, toolregistry.CodeToolError, ""},
		{"nil replacement", echoArgs, func(*toolregistry.Record, func() (*toolregistry.Result, error)) (*toolregistry.Result, error) {
			return nil, nil
		}, toolregistry.CodeOK, ""},
		{"a failure stays a failure", failing, func(*toolregistry.Record, func() (*toolregistry.Result, error)) (*toolregistry.Result, error) {
			return toolregistry.TextResult("all good"), nil
		}, toolregistry.CodeToolError, "all good"},
		{"a failing listener keeps the original failure", failing, func(*toolregistry.Record, func() (*toolregistry.Result, error)) (*toolregistry.Result, error) {
			return nil, errors.New("scanner down")
		}, toolregistry.CodeToolError, "Error: boom"},
		{"sees the outcome", failing, func(rec *toolregistry.Record, next func() (*toolregistry.Result, error)) (*toolregistry.Result, error) {
			r, err := next()
			return toolregistry.ErrorResult(string(rec.Outcome) + " / " + rec.Err.Msg + " / " + r.Text()), err
		}, toolregistry.CodeToolError, "tool_error / boom / Error: boom"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root, reg := newRegistry(t, nil)
			if _, err := reg.Register(root, toolregistry.Tool{Name: "t", Execute: tc.execute}); err != nil {
				t.Fatal(err)
			}
			if _, err := toolregistry.PostExecute.On(root, tc.listener); err != nil {
				t.Fatal(err)
			}
			res, err := reg.Execute(root, root, "t", nil, toolregistry.ExecOptions{})
			checkOutcome(t, res, err, tc.want, tc.text)
			if rec := reg.History()[0]; rec.Outcome != tc.want || rec.Result != res {
				t.Fatalf("record %+v", rec)
			}
		})
	}
}

func TestToolErrorFormatting(t *testing.T) {
	err := &toolregistry.ToolError{Code: toolregistry.CodeDenied, Tool: "rm", Msg: "denied: no"}
	if got := err.Error(); got != `tool "rm": denied: no` {
		t.Fatalf("Error() = %q", got)
	}
	if got := toolregistry.ErrDenied.Error(); got != "toolregistry: denied" {
		t.Fatalf("sentinel Error() = %q", got)
	}
	if !errors.Is(err, &toolregistry.ToolError{Code: toolregistry.CodeDenied, Tool: "rm"}) ||
		errors.Is(err, &toolregistry.ToolError{Code: toolregistry.CodeDenied, Tool: "ls"}) {
		t.Fatal("Is must match on code and, when set, tool")
	}
	inner := errors.New("inner")
	if !errors.Is(&toolregistry.ToolError{Code: toolregistry.CodeToolError, Err: inner}, inner) {
		t.Fatal("Unwrap")
	}
	b, _ := json.Marshal(err)
	if string(b) != `{"code":"denied","tool":"rm","message":"denied: no"}` {
		t.Fatalf("JSON %s", b)
	}
}

func TestListenerErrorsAreLogged(t *testing.T) {
	root, log := ctxtest.NewLogged(t)
	reg := ctxtest.MountService(t, root, toolregistry.Plugin, nil, toolregistry.Key)
	if _, err := toolregistry.Changed.On(root, func(toolregistry.Change) error { return errors.New("changed listener") }); err != nil {
		t.Fatal(err)
	}
	if _, err := toolregistry.Executed.On(root, func(toolregistry.Record) error { return errors.New("executed listener") }); err != nil {
		t.Fatal(err)
	}
	if _, err := reg.Register(root, reply("t", "ok")); err != nil {
		t.Fatal(err)
	}
	if got, err := exec(t, reg, root, "t", ""); err != nil || got != "ok" {
		t.Fatalf("a failing listener changed the call: %q, %v", got, err)
	}
	for _, want := range []string{"changed listener", "executed listener"} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, log.String())
		}
	}
}
