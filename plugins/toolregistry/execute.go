package toolregistry

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"strconv"
	"sync"
	"time"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/permission"
)

// ExecOptions adjusts one [Registry.Execute] call. The zero value is ready to use; it is a
// plain value, read once by Execute.
type ExecOptions struct {
	// CallID identifies the call in the history and events; empty means "call_<n>".
	CallID string
	// Session is who the call is made for (an agent's session), handed to the [Policy]
	// chain ([PolicyRequest].Session) and to the tool ([Call].Session) as it is: the
	// registry never reads it. nil for a call made for nobody in particular.
	Session any
	// Approver answers the call's [permission.Ask] verdict; nil means the [ApprovalKey] service seen
	// from the caller's context.
	Approver Approver
}

// PolicyRequest is what [Policy] listeners and the [Approver] decide on.
//
// A PolicyRequest is owned by the execution; listeners must not modify or keep it.
type PolicyRequest struct {
	CallID string
	// Tool is the tool as visible from the caller.
	Tool Info
	// Args are the validated arguments, a JSON object.
	Args json.RawMessage
	// Caller is the context the call was made from.
	Caller *ctx.Context
	// Session is [ExecOptions].Session: who the call is made for.
	Session any

	preview func(context.Context, json.RawMessage) (*permission.Preview, error) // the tool's Preview
}

// Preview returns what the call would do, from the tool's [Tool.Preview]: what an approval
// shows the person. It is nil, with no error, for a tool that gives none.
func (r *PolicyRequest) Preview(cx context.Context) (*permission.Preview, error) {
	if r.preview == nil {
		return nil, nil
	}
	return r.preview(cx, r.Args)
}

// Approver decides on calls the policy answered with [permission.Ask]. Provide one with [ApprovalKey];
// without one, such calls are denied with a reason that says so.
//
// Implementations must be safe for concurrent use: executions ask concurrently.
type Approver interface {
	// Approve blocks until the call is approved or refused, or ctx (the call's context) is
	// done. reason is the policy's Decision.Reason. An error refuses the call (or cancels it
	// when ctx is done).
	Approve(cx context.Context, req *PolicyRequest, reason string) (Approval, error)
}

// Approval is an [Approver]'s answer, a plain value.
type Approval struct {
	Approved bool
	// Reason explains a refusal.
	Reason string
}

// ApproverFunc adapts a function to [Approver]. The function must be safe for concurrent
// use.
type ApproverFunc func(cx context.Context, req *PolicyRequest, reason string) (Approval, error)

// Approve calls f.
func (f ApproverFunc) Approve(ccx context.Context, req *PolicyRequest, reason string) (Approval, error) {
	return f(ccx, req, reason)
}

// Pipeline events and the approval service.
var (
	// Policy is the permission waterfall, dispatched from the caller's context (so a
	// listener registered with [ctx.Subtree] rules only its own subtree's calls). Each
	// listener may answer itself or call next and adjust the answer; the default at the end
	// of the chain is [permission.Allow]. A listener error or panic denies the call, and so does an
	// unknown action.
	Policy = ctx.NewChain[*PolicyRequest, permission.Decision]("tools/policy")
	// PostExecute runs after every execution, whatever its outcome, from the caller's
	// context. next returns the result so far; a listener may return a replacement (for
	// example redacted content). A replacement with IsError set fails a successful call
	// with [CodeToolError]; a failed call stays failed whatever the replacement; a listener
	// error fails the call with CodeToolError. The Record's Outcome and Err describe the
	// outcome so far.
	PostExecute = ctx.NewChain[*Record, *Result]("tools/post-execute")
	// Executed is emitted once per execution, after it is recorded, from the caller's
	// context. Listener errors are logged.
	Executed = ctx.NewEvent[Record]("tools/executed")
	// ApprovalKey is the optional approval service consulted on [permission.Ask]. The registry reads it
	// with Get from the caller's context, so it need not be injected.
	ApprovalKey = ctx.NewKey[Approver]("toolApproval")
)

var emptyArgs = json.RawMessage("{}")

// run is the per-execution state that the registry lends to listeners: the [Policy] chain
// and the approver get req, the [PostExecute] chain rec, and none may keep them (the history
// and [Executed] get copies of rec). So a run is reused (runs), and a call allocates only
// what the tool may keep (toolCall): a call allocated 528 bytes in two objects, and on two
// cores the garbage collector's work was much of what did not scale (issue 39,
// docs/performance.md).
type run struct {
	req  PolicyRequest
	rec  Record
	lane *lane // the processor's lane the call took at its start
}

// runs holds the runs not in use (sync.Pool: one cache per processor).
var runs = sync.Pool{New: func() any { return new(run) }}

// toolCall is what the tool is handed: its Call and its context. Both belong to the
// execution, and a tool must not use them after it returned ([Tool].Execute), so a toolCall
// is reused by a later call when the tool never waited on its context. One that did (its
// standard context, and any context derived from it, exists) is left to the collector: a
// derived context kept past the call reads the call's values through it, and must see the
// call ended. Reusing them is what makes a call that does not wait allocate nothing; the
// 192 bytes per call were what the collector still spent its cycles on, and what kept
// concurrent calls from scaling with cores (issue 39, docs/performance.md).
type toolCall struct {
	call Call
	cx   callContext // the tool's context
}

// toolCalls holds the toolCalls not in use (sync.Pool: one cache per processor).
var toolCalls = sync.Pool{New: func() any { return new(toolCall) }}

// newToolCall returns a toolCall for a call, ready but for its context's init.
func newToolCall(call Call) *toolCall {
	tc := toolCalls.Get().(*toolCall)
	tc.call, tc.cx = call, callContext{}
	return tc
}

// release hands tc back for a later call, unless its tool made the context's standard one;
// tc's call has returned, its deadline is stopped and its context ended. tc is cleared when
// it is next taken, not here: until then a late read of the context (a tool that broke the
// rule) still finds the call ended, not a zero context.
func (tc *toolCall) release() {
	if tc.cx.std.Load() == nil {
		toolCalls.Put(tc)
	}
}

func (x *run) current() (*Result, error) { return x.rec.Result, nil }

func allowAll() (permission.Decision, error) {
	return permission.Decision{Action: permission.Allow}, nil
}

// Execute runs the tool called name, as visible from c's scope, through the pipeline.
// cx bounds the call: its cancellation (or deadline) cancels the tool and the approval wait,
// and its values reach the tool. Pass c itself (a [*ctx.Context] is a [context.Context]) for
// a call that ends when the caller's scope unloads, or a context derived from c to keep that
// and add a deadline; nil means c. The steps:
//
//  1. lookup (unknown or hidden → [CodeUnknownTool]);
//  2. argument validation: a JSON object ("{}" when args is empty) valid against the
//     parameters schema ([CodeInvalidArgs]);
//  3. the [Policy] waterfall (default allow; [permission.Ask] consults the [ApprovalKey] service)
//     ([CodeDenied]); a call whose context is done before or after it stops there
//     ([CodeCancelled]);
//  4. the tool's Execute with cx and the tool's timeout ([CodeTimeout],
//     [CodeCancelled], [CodeToolError], [CodePanic]), then its Project;
//  5. output validation of Result.Structured against the output schema
//     ([CodeInvalidOutput]);
//  6. the [PostExecute] waterfall;
//  7. the output cap (maxOutputBytes), cutting text with a marker that says how much was
//     dropped;
//  8. recording into the history and the [Executed] event.
//
// Execute always returns a non-nil *Result. On failure it has IsError set and content that
// reports the failure to the model ("Error: <message>", or the tool's own error content),
// and err is a [*ToolError] with the outcome's code. args is kept in the history and must
// not be modified afterwards.
func (r *Registry) Execute(cx context.Context, c *ctx.Context, name string, args json.RawMessage, opts ExecOptions) (*Result, error) {
	o := r.options()
	x := runs.Get().(*run)
	defer func() {
		*x = run{} // keeps nothing of the call alive
		runs.Put(x)
	}()
	rec := &x.rec
	rec.Started = time.Now()
	x.lane = r.lanes.pick()
	rec.CallID = opts.CallID
	if rec.CallID == "" {
		rec.CallID = r.lanes.callID(x.lane)
	}
	rec.Tool, rec.Args = name, args
	rec.Scope = c.Scope()
	rec.ScopeName = rec.Scope.Name()
	bcx := cx
	if bcx == nil {
		bcx = c
	}
	res, terr := r.pipeline(c, bcx, x, o, &opts)
	res, terr = r.finish(c, x, res, terr, o)
	if terr != nil {
		return res, terr
	}
	return res, nil
}

// pipeline runs steps 1 to 5. On failure res is nil, or the tool's own error result.
func (r *Registry) pipeline(c *ctx.Context, bcx context.Context, x *run, o *Config, opts *ExecOptions) (*Result, *ToolError) {
	name, args := x.rec.Tool, x.rec.Args
	e, hidden := r.resolve(c.Scope(), name)
	if e == nil {
		msg := "unknown tool " + strconv.Quote(name)
		if hidden != nil {
			msg += " (hidden in scope " + strconv.Quote(hidden.Name()) + " by a restriction)"
		} else {
			msg += didYouMean(suggestTools(name, r.visibleNames(c)))
		}
		return nil, &ToolError{Code: CodeUnknownTool, Tool: name, Msg: msg}
	}

	if len(bytes.TrimSpace(args)) == 0 {
		args = emptyArgs
	}
	if terr := checkArgs(e, name, args); terr != nil {
		return nil, terr
	}

	if terr := cancelledBeforeDispatch(bcx, name); terr != nil {
		return nil, terr
	}
	x.req = PolicyRequest{CallID: x.rec.CallID, Tool: e.info, Args: args, Caller: c, Session: opts.Session, preview: e.tool.Preview}
	if terr := r.authorize(c, bcx, &x.req, opts.Approver); terr != nil {
		return nil, terr
	}
	if terr := cancelledBeforeDispatch(bcx, name); terr != nil {
		return nil, terr
	}

	tc := newToolCall(Call{ID: x.rec.CallID, Tool: name, Args: args, Caller: c, Session: opts.Session, Attachments: r.store})
	res, terr := dispatch(&x.lane.timers, &tc.cx, bcx, e, &tc.call, o)
	tc.release()
	if terr != nil {
		return res, terr
	}

	if e.out != nil {
		err := errors.New("structured content is required by the output schema")
		if len(bytes.TrimSpace(res.Structured)) > 0 {
			err = e.out.ValidateText(res.Structured)
		}
		if err != nil {
			return res, &ToolError{Code: CodeInvalidOutput, Tool: name, Msg: "returned invalid output: " + err.Error(), Err: err}
		}
	}
	return res, nil
}

// checkArgs checks that args is a JSON object valid against e's parameters schema
// (jsoncheck.Schema.ValidateText: the fast scan, else the decoded value, else encoding/json).
func checkArgs(e *entry, name string, args json.RawMessage) *ToolError {
	if e.args == nil || !objectStart(args) {
		if !isObject(args) {
			return notObject(name)
		}
		return nil
	}
	if err := e.args.ValidateText(args); err != nil {
		if !json.Valid(args) {
			return notObject(name)
		}
		ae := argumentError(e.args.Parsed(), args, err)
		return &ToolError{Code: CodeInvalidArgs, Tool: name, Msg: "invalid arguments: " + ae.Error(), Err: ae}
	}
	return nil
}

func notObject(name string) *ToolError {
	return &ToolError{Code: CodeInvalidArgs, Tool: name, Msg: "invalid arguments: not a JSON object"}
}

// cancelledBeforeDispatch reports a call whose context ended before the tool ran.
func cancelledBeforeDispatch(bcx context.Context, name string) *ToolError {
	if bcx.Err() == nil {
		return nil
	}
	cause := context.Cause(bcx)
	return &ToolError{Code: CodeCancelled, Tool: name, Msg: "cancelled before dispatch: " + cause.Error(), Err: cause}
}

// authorize runs the policy chain and, on Ask, the approver (ap, else the ApprovalKey
// service).
func (r *Registry) authorize(c *ctx.Context, bcx context.Context, req *PolicyRequest, ap Approver) *ToolError {
	name := req.Tool.Name
	d, err := Policy.Waterfall(c, req, allowAll)
	if err != nil {
		return &ToolError{Code: CodeDenied, Tool: name, Msg: "denied: policy failed: " + err.Error(), Err: err}
	}
	switch d.Action {
	case permission.Allow:
		return nil
	case permission.Deny:
		reason := d.Reason
		if reason == "" {
			reason = "denied by policy"
		}
		return &ToolError{Code: CodeDenied, Tool: name, Msg: "denied: " + reason}
	case permission.Ask:
		return r.approve(c, bcx, req, d.Reason, ap)
	default:
		return &ToolError{Code: CodeDenied, Tool: name, Msg: fmt.Sprintf("denied: policy returned an invalid action %q", d.Action)}
	}
}

func (r *Registry) approve(c *ctx.Context, bcx context.Context, req *PolicyRequest, reason string, ap Approver) *ToolError {
	name := req.Tool.Name
	what := "approval required"
	if reason != "" {
		what += " (" + reason + ")"
	}
	if ap == nil {
		ap, _ = ApprovalKey.Get(c)
	}
	if ap == nil {
		return &ToolError{Code: CodeDenied, Tool: name, Msg: "denied: " + what + " but no approval service is mounted"}
	}
	var a Approval
	err := ctx.Safely(func() (err error) {
		a, err = ap.Approve(bcx, req, reason)
		return err
	})
	switch {
	case err != nil && bcx.Err() != nil:
		cause := context.Cause(bcx)
		return &ToolError{Code: CodeCancelled, Tool: name, Msg: "cancelled while waiting for approval: " + cause.Error(), Err: err}
	case err != nil:
		return &ToolError{Code: CodeDenied, Tool: name, Msg: "denied: " + what + ", and approval failed: " + err.Error(), Err: err}
	case !a.Approved:
		why := a.Reason
		if why == "" {
			why = "not approved"
		}
		return &ToolError{Code: CodeDenied, Tool: name, Msg: "denied by approver: " + why}
	}
	return nil
}

// dispatch runs the tool under its timeout and classifies what it returned.
func dispatch(dl *deadlines, cc *callContext, bcx context.Context, e *entry, call *Call, o *Config) (*Result, *ToolError) {
	timeout := e.timeout
	if timeout == 0 {
		timeout = o.defaultTimeout()
	}
	// The tool runs under a context the registry can end: at the tool's timeout, or through
	// Call.Cancel. A caller's deadline that comes first makes the timeout moot: then no
	// deadline is registered, as context.WithTimeout would not arm its timer.
	if timeout > 0 && !deadlineBefore(bcx, timeout) {
		dl.start(cc, bcx, timeout)
		defer dl.stop(cc)
	} else {
		cc.init(bcx)
		defer cc.end(context.Canceled)
	}
	cx := context.Context(cc)
	call.cc = cc
	res, p, err := invoke(cx, e.tool.Execute, call)
	name := call.Tool
	if p != nil {
		return nil, &ToolError{Code: CodePanic, Tool: name, Msg: fmt.Sprintf("panicked: %v", p.Value), Err: p}
	}
	if err != nil || (res != nil && res.IsError) {
		switch {
		case errors.Is(cc.cause(), errTimeout):
			if err == nil {
				err = context.DeadlineExceeded
			}
			return nil, &ToolError{Code: CodeTimeout, Tool: name, Msg: "timed out after " + timeout.String(), Err: err}
		case bcx.Err() != nil:
			cause := context.Cause(bcx)
			if err == nil {
				err = cause
			}
			return nil, &ToolError{Code: CodeCancelled, Tool: name, Msg: "cancelled: " + cause.Error(), Err: err}
		case err != nil:
			return nil, &ToolError{Code: CodeToolError, Tool: name, Msg: err.Error(), Err: err}
		default:
			msg := res.Text()
			if msg == "" {
				msg = "the tool reported an error without a message"
			}
			return res, &ToolError{Code: CodeToolError, Tool: name, Msg: msg}
		}
	}
	if res == nil {
		res = &Result{}
	}
	if e.tool.Project != nil {
		var content []Content
		if pe := ctx.Safely(func() error { content = e.tool.Project(res); return nil }); pe != nil {
			return nil, &ToolError{Code: CodePanic, Tool: name, Msg: "projection " + pe.Error(), Err: pe}
		}
		projected := *res
		projected.Content = content
		res = &projected
	}
	return res, nil
}

// deadlineBefore reports whether cx has a deadline earlier than timeout from now.
func deadlineBefore(cx context.Context, timeout time.Duration) bool {
	d, ok := cx.Deadline()
	return ok && time.Until(d) < timeout
}

// invoke calls fn, recovering a panic.
func invoke(cx context.Context, fn func(context.Context, *Call) (*Result, error), call *Call) (res *Result, p *ctx.PanicError, err error) {
	defer func() {
		if v := recover(); v != nil {
			p = &ctx.PanicError{Value: v, Stack: debug.Stack()}
		}
	}()
	res, err = fn(cx, call)
	return res, nil, err
}

// finish runs steps 6 to 8.
func (r *Registry) finish(c *ctx.Context, x *run, res *Result, terr *ToolError, o *Config) (*Result, *ToolError) {
	rec := &x.rec
	if terr != nil && (res == nil || !res.IsError) {
		res = failure(res, terr)
	}
	rec.Outcome, rec.Err, rec.Result = CodeOK, terr, res
	if terr != nil {
		rec.Outcome = terr.Code
	}

	out, err := res, error(nil)
	if PostExecute.Listened(c) { // the method value x.current is an allocation
		out, err = PostExecute.Waterfall(c, rec, x.current)
	}
	switch {
	case err != nil && terr != nil:
		// Already failed: the model keeps seeing the original failure.
		r.logger.Warn("tools/post-execute listener failed", "tool", rec.Tool, "err", err)
	case err != nil:
		terr = &ToolError{Code: CodeToolError, Tool: rec.Tool, Msg: "post-execute: " + err.Error(), Err: err}
		res = failure(res, terr)
	case out == res:
	case out == nil:
		res = &Result{IsError: terr != nil}
	case terr != nil && !out.IsError:
		failed := *out
		failed.IsError = true
		res = &failed
	case terr == nil && out.IsError:
		msg := out.Text()
		if msg == "" {
			msg = "blocked by a post-execute listener"
		}
		terr = &ToolError{Code: CodeToolError, Tool: rec.Tool, Msg: msg}
		res = out
	default:
		res = out
	}
	if terr != nil {
		rec.Outcome, rec.Err = terr.Code, terr
	}

	res = capOutput(res, o.MaxOutputBytes)
	rec.Result = res
	rec.Duration = time.Since(rec.Started)
	x.lane.hist.add(rec)
	if err := Executed.Emit(c, *rec); err != nil {
		r.logger.Warn("tools/executed listener failed", "tool", rec.Tool, "err", err)
	}
	return res, terr
}

// failure returns the error result reporting terr to the model, keeping the programmatic
// parts of res.
func failure(res *Result, terr *ToolError) *Result {
	f := ErrorResult("Error: " + terr.Msg)
	if res != nil {
		f.Structured, f.Raw = res.Structured, res.Raw
	}
	return f
}
