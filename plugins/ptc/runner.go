package ptc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dop251/goja"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/internal/words"
	"github.com/cordisgo/harness/plugins/toolregistry"
)

// Runner runs programs against the tools of a registry, each in a fresh interpreter.
//
// A Runner is safe for concurrent use: runs share nothing but the registry.
type Runner struct {
	reg    *toolregistry.Registry
	limits Limits
	logger *slog.Logger
	safe   func(toolregistry.Info) bool
	exec   toolregistry.ExecOptions // the session and approver of the programs' calls
}

// Options configure [New]. A plain value.
type Options struct {
	// Limits bound every run; the zero value means [Limits.Default].
	Limits Limits
	// Logger receives the runner's diagnostics (nil: slog.Default()).
	Logger *slog.Logger
	// Safe reports whether calls of a tool may overlap other calls (nil: [ReadOnly]). The
	// agent passes its own rule, so programs and native calls overlap alike. It must be safe
	// for concurrent use.
	Safe func(toolregistry.Info) bool
}

// New returns a runner that calls the tools of reg. Invalid limits are an error naming the
// key.
func New(reg *toolregistry.Registry, o Options) (*Runner, error) {
	if reg == nil {
		return nil, ErrNoRegistry
	}
	if o.Limits == (Limits{}) {
		o.Limits.Default()
	}
	if err := o.Limits.Validate(); err != nil {
		return nil, fmt.Errorf("ptc limits: %w", err)
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Safe == nil {
		o.Safe = ReadOnly
	}
	return &Runner{reg: reg, limits: o.Limits, logger: o.Logger, safe: o.Safe}, nil
}

// Limits returns the runner's limits.
func (r *Runner) Limits() Limits { return r.limits }

// With returns a runner like r whose overlap rule is safe (nil: [ReadOnly]).
func (r *Runner) With(safe func(toolregistry.Info) bool) *Runner {
	if safe == nil {
		safe = ReadOnly
	}
	c := *r
	c.safe = safe
	return &c
}

// For returns a runner like r whose programs' calls are made with opts' Session and
// Approver (each call gets its own CallID): an agent passes its session, so that its
// permissions and approvals decide the calls of a program as they decide its own.
func (r *Runner) For(opts toolregistry.ExecOptions) *Runner {
	c := *r
	c.exec = opts
	return &c
}

// Program is one run's input. A plain value.
type Program struct {
	// Code is the TypeScript body of an async function: it may await and return.
	Code string `json:"code"`
	// Description is a label for people; the runner only logs it.
	Description string `json:"description,omitempty"`
	// CallID identifies the run (the model's run_code call id); the nested calls get the
	// ids "<CallID>:code:<n>". Empty means "ptc".
	CallID string `json:"callId,omitempty"`
}

// Call is one tool call a program made, as the registry executed it. A plain value.
type Call struct {
	// ID is the registry call id, "<run's CallID>:code:<n>" (n from 1, in call order).
	ID   string          `json:"id"`
	Tool string          `json:"tool"`
	Args json.RawMessage `json:"args"`
	// Outcome is the registry's outcome code (toolregistry.CodeOK on success).
	Outcome toolregistry.Code `json:"outcome"`
	// Error is the failure's message, empty on success.
	Error    string        `json:"error,omitempty"`
	Duration time.Duration `json:"durationNs"`
}

// Outcome is what a run produced. A plain value owned by the caller.
type Outcome struct {
	// Value is the JSON of the program's return value; nil when it returned nothing
	// (undefined or a function).
	Value json.RawMessage `json:"value,omitempty"`
	// Console is what the program wrote with console.*, one line per call.
	Console string `json:"console,omitempty"`
	// Err is why the run failed; nil on success.
	Err *Error `json:"error,omitempty"`
	// Captured is, after an output-limit failure, the output kept up to the limit: the
	// console output followed by the start of the return value's JSON.
	Captured string `json:"captured,omitempty"`
	// Calls are the tool calls the program made, in the order they finished.
	Calls []Call `json:"calls,omitempty"`
	// Images are the image attachments the nested calls returned, in call order.
	Images []toolregistry.Attachment `json:"images,omitempty"`
	// CPU is the time the interpreter spent running the program's code; Wall the whole run.
	CPU  time.Duration `json:"cpuNs"`
	Wall time.Duration `json:"wallNs"`
	// HeapGrowth is the largest growth of the process heap seen during the run (bytes).
	HeapGrowth int64 `json:"heapGrowth"`
}

// errWall is the cause of a run context that reached the wall-time limit.
var errWall = fmt.Errorf("ptc: wall time limit")

// job is a function to run on the interpreter's goroutine.
type job func()

// run is one program run. Fields without a comment are owned by the loop goroutine (the
// goroutine that called Run), which alone touches the interpreter.
type run struct {
	r      *Runner
	l      Limits
	c      *ctx.Context
	vm     *goja.Runtime
	src    []string // the program's lines, for error messages
	callID string
	tools  []toolregistry.Info // the tools the program sees

	jobs chan job      // results of calls and sleeps, for the loop
	stop chan struct{} // closed by fail
	done chan struct{} // closed when the loop ends: nothing is delivered after
	wg   sync.WaitGroup

	reason     atomic.Pointer[Error] // the first limit hit, set by fail
	stopOnce   sync.Once
	calls      context.Context
	endCalls   context.CancelCauseFunc
	heapBase   int64        // the heap when the run began (set before the watcher starts)
	heapGrowth atomic.Int64 // the largest growth seen
	collected  atomic.Int64 // when the last collection it forced ended (unix ns)
	gcMu       sync.Mutex
	lastGC     time.Time     // when the run last started a forced collection (guarded by gcMu)
	gcDone     chan struct{} // closed when that collection ends (guarded by gcMu)

	// bridge state (loop goroutine only)
	queue     []*pending
	ready     []*pending              // calls the scheduler started, not launched yet (see launch)
	sched     *toolregistry.Scheduler // the one batch rule: safe calls overlap, others run alone
	made      int
	sleeps    map[int]sleeping // the sleeps pending, by number
	slept     int              // the sleeps started
	ref       *runRef          // what the run's timers hold
	console   strings.Builder
	busy      time.Duration
	cpu       *time.Timer // the CPU limit's timer, armed while the interpreter runs
	stringify goja.Callable
	parse     goja.Callable
	errCtor   goja.Value                // ToolCallError
	patterns  map[string]*regexp.Regexp // guard: the patterns Go's regexp engine runs

	plusSlow     goja.Callable // guard: + with an object or a symbol (concat.go)
	strSlow      goja.Callable // guard: a template's substitution that is an object or a symbol
	jsonReplacer goja.Value    // guard: the replacer of the guarded JSON.stringify
	jsonWriters  []*jsonWriter // guard: its calls in progress, innermost last

	mu     sync.Mutex // guards record and images
	record []Call
	images []toolregistry.Attachment
}

// Run runs p as seen from c (the agent's context: the program sees the tools visible from
// c's scope and its calls are made from c). cx bounds the run: its cancellation interrupts
// the program and cancels the calls in flight. Run returns when the program has finished
// and every call it started has returned; it never panics on a program's behalf.
func (r *Runner) Run(cx context.Context, c *ctx.Context, p Program) *Outcome {
	out := r.run(cx, c, p)
	if out.HeapGrowth > r.limits.MaxMemoryBytes/4 {
		// The interpreter of a run that grew the heap much is garbage now: collected here,
		// the next run measures its growth from a live heap without it (see baseline).
		runtime.GC()
	}
	return out
}

func (r *Runner) run(cx context.Context, c *ctx.Context, p Program) *Outcome {
	start := time.Now()
	x := &run{r: r, l: r.limits, c: c, callID: p.CallID, jobs: make(chan job, 16), sched: toolregistry.NewScheduler(r.limits.MaxConcurrentCalls),
		stop: make(chan struct{}), done: make(chan struct{}), sleeps: map[int]sleeping{}, ref: &runRef{}}
	x.ref.p.Store(x)
	if x.callID == "" {
		x.callID = "ptc"
	}
	out := &Outcome{}
	prog, cerr := compileProgram(p.Code)
	if cerr != nil {
		out.Err = cerr
		out.Wall = time.Since(start)
		return out
	}
	x.src = strings.Split(p.Code, "\n")

	x.vm = goja.New()
	runcx, cancelRun := context.WithTimeoutCause(cx, ms(x.l.WallTimeMs), errWall)
	defer cancelRun()
	x.calls, x.endCalls = context.WithCancelCause(runcx)
	defer x.endCalls(context.Canceled)
	ended := func() *Error {
		if errors.Is(context.Cause(runcx), errWall) {
			return &Error{Kind: KindTimeout, Msg: "the program ran longer than " + ms(x.l.WallTimeMs).String() + " (wall time limit)"}
		}
		return &Error{Kind: KindCancelled, Msg: "the run was cancelled: " + context.Cause(runcx).Error()}
	}
	stopWatch := context.AfterFunc(runcx, func() { x.fail(ended()) })
	defer stopWatch()
	stopMem := x.watchMemory()

	var value goja.Value
	var err error
	x.enter(func() {
		if err = x.setup(); err == nil {
			value, err = x.vm.RunProgram(prog)
		}
	})
	switch {
	case err != nil:
		out.Err = x.errorOf(err)
	case value == nil:
		// Stopped before the program started (a context already cancelled: enter runs
		// nothing in a stopped interpreter): the run's reason says why.
		if out.Err = x.reason.Load(); out.Err == nil {
			out.Err = ended()
		}
	default:
		out.Value, out.Err = x.loop(value)
	}
	if out.Err != nil && (out.Err.Kind == KindException || out.Err.Kind == KindStalled) {
		// A limit hit or a cancellation while the program was settling wins over what it
		// caused (the calls it cancelled reject).
		if reason := x.reason.Load(); reason != nil {
			out.Err = reason
		} else if runcx.Err() != nil {
			out.Err = ended()
		}
	}

	// End what is left: calls in flight (cancelled), sleeps, the memory watcher.
	x.endCalls(context.Canceled)
	for _, s := range x.sleeps {
		s.timer.Stop()
	}
	x.ref.p.Store(nil)
	close(x.done)
	x.wg.Wait()
	stopMem()

	out.Console = x.console.String()
	if out.Err != nil && out.Err.Kind == KindOutputLimit {
		out.Captured = out.Console + string(out.Value)
		if len(out.Captured) > x.l.MaxOutputBytes {
			out.Captured = out.Captured[:x.l.MaxOutputBytes]
		}
		out.Value = nil
	}
	x.mu.Lock()
	out.Calls, out.Images = x.record, x.images
	x.mu.Unlock()
	out.CPU, out.Wall, out.HeapGrowth = x.busy, time.Since(start), x.heapGrowth.Load()
	r.logger.Debug("ptc run", "call_id", x.callID, "description", p.Description, "calls", len(out.Calls),
		"cpu", out.CPU, "wall", out.Wall, "failed", out.Err != nil)
	return out
}

// runRef is how the run's timers reach it: the run while it lasts, nil once it has ended.
// A stopped timer can stay in the runtime's timer heap until its time would have come (the
// CPU limit's, a minute), keeping what its function holds reachable; holding the run, that
// is the interpreter and every value of the program, which the next run would then count
// in the live heap it measures its growth from, and see freed under it as room it never
// had.
type runRef struct{ p atomic.Pointer[run] }

// afterFunc is time.AfterFunc for the run: f gets the run, unless it has ended. f must
// reach the run only through its argument (a closure over x or a value of the interpreter
// keeps them alive as above).
func (x *run) afterFunc(d time.Duration, f func(x *run)) *time.Timer {
	ref := x.ref
	return time.AfterFunc(d, func() {
		if x := ref.p.Load(); x != nil {
			f(x)
		}
	})
}

// fail stops the run with e: the first call wins. Safe from any goroutine.
func (x *run) fail(e *Error) {
	x.stopOnce.Do(func() {
		x.reason.Store(e)
		close(x.stop)
		x.vm.Interrupt(e)
		x.endCalls(e)
	})
}

// stopped reports whether fail was called.
func (x *run) stopped() bool { return x.reason.Load() != nil }

// enter runs fn on the interpreter, counting its time against the CPU limit.
func (x *run) enter(fn func()) {
	left := ms(x.l.CPUTimeMs) - x.busy
	if left <= 0 {
		left = time.Nanosecond
	}
	if x.cpu == nil {
		x.cpu = x.afterFunc(left, func(x *run) {
			x.fail(&Error{Kind: KindCPU, Msg: "the program's code ran longer than " + ms(x.l.CPUTimeMs).String() + " (CPU time limit; time spent waiting for tools does not count)"})
		})
	} else {
		x.cpu.Reset(left)
	}
	t := x.cpu
	start := time.Now()
	defer func() {
		x.busy += time.Since(start)
		t.Stop()
		// Some of goja's entry points (Runtime.New) re-panic an interrupt instead of
		// returning it; the run's reason says why it stopped.
		if v := recover(); v != nil {
			if _, ok := v.(*goja.InterruptedError); !ok || !x.stopped() {
				panic(v)
			}
		}
	}()
	if x.stopped() {
		return // nothing more runs in a stopped interpreter
	}
	fn()
}

// loop delivers call results and sleeps to the program until its promise settles, then
// returns the JSON of its value.
func (x *run) loop(v goja.Value) (json.RawMessage, *Error) {
	main, ok := v.Export().(*goja.Promise)
	if !ok {
		return nil, &Error{Kind: KindException, Msg: "internal error: the program did not start as an async function"}
	}
	for x.launch(); main.State() == goja.PromiseStatePending; x.launch() {
		if x.stopped() {
			return nil, x.reason.Load()
		}
		if x.sched.Running() == 0 && len(x.queue) == 0 && len(x.sleeps) == 0 {
			return nil, &Error{Kind: KindStalled, Msg: "the program awaits a promise that nothing will settle: no tool call or sleep is pending"}
		}
		select {
		case j := <-x.jobs:
			x.enter(j)
		case <-x.stop:
		}
	}
	if x.stopped() {
		return nil, x.reason.Load()
	}
	if main.State() == goja.PromiseStateRejected {
		return nil, x.thrown(main.Result())
	}
	return x.returned(main.Result())
}

// returned encodes the program's return value and checks the output budget.
func (x *run) returned(v goja.Value) (json.RawMessage, *Error) {
	if v == nil || goja.IsUndefined(v) {
		return nil, nil
	}
	var s goja.Value
	var err error
	x.enter(func() { s, err = x.stringify(goja.Undefined(), v) })
	if err != nil {
		if e := x.reason.Load(); e != nil {
			return nil, e
		}
		return nil, &Error{Kind: KindInvalidOutput, Msg: "the return value cannot be written as JSON: " + exceptionText(err)}
	}
	if s == nil || goja.IsUndefined(s) {
		return nil, nil
	}
	raw := json.RawMessage(s.String())
	if x.console.Len()+len(raw) > x.l.MaxOutputBytes {
		return raw, x.outputLimit(x.console.Len() + len(raw))
	}
	return raw, nil
}

func (x *run) outputLimit(n int) *Error {
	return &Error{Kind: KindOutputLimit, Msg: fmt.Sprintf("the program's output (console and return value) passed %d bytes (%d so far); return less, for example a summary or the few items that matter", x.l.MaxOutputBytes, n)}
}

// thrown describes a value the program threw, with the line it came from.
func (x *run) thrown(v goja.Value) *Error {
	e := &Error{Kind: KindException, Msg: x.describe(v)}
	if o, ok := v.(*goja.Object); ok {
		if st := o.Get("stack"); st != nil && !goja.IsUndefined(st) {
			e.Line = lineOf(st.String())
		}
	}
	x.withSource(e)
	return e
}

// withSource fills in the source line of e.
func (x *run) withSource(e *Error) {
	if e.Line > 0 && e.Line <= len(x.src) {
		e.Source = words.Clip(strings.TrimSpace(x.src[e.Line-1]), 201)
	}
}

// maxDescription bounds the text of a thrown value in the run's error.
const maxDescription = 2000

// describe renders a thrown value: "Error: message", or its JSON, cut at maxDescription
// characters.
func (x *run) describe(v goja.Value) string {
	d := x.description(v)
	if len(d) > maxDescription {
		d = strings.ToValidUTF8(d[:maxDescription], "") + "… (" + strconv.Itoa(len(d)) + " bytes in all)"
	}
	return d
}

func (x *run) description(v goja.Value) string {
	if v == nil {
		return "undefined"
	}
	if o, ok := v.(*goja.Object); ok {
		if o.Get("stack") != nil || o.ClassName() == "Error" {
			name, msg := o.Get("name"), o.Get("message")
			if name != nil && msg != nil {
				return name.String() + ": " + msg.String()
			}
		}
	}
	if x.stringify != nil {
		if s, err := x.stringify(goja.Undefined(), v); err == nil && s != nil && !goja.IsUndefined(s) {
			return "uncaught " + s.String()
		}
	}
	return "uncaught " + v.String()
}

// errorOf classifies an error returned by the interpreter.
func (x *run) errorOf(err error) *Error {
	if e := x.reason.Load(); e != nil {
		return e
	}
	var ex *goja.Exception
	var so *goja.StackOverflowError
	switch {
	case errors.As(err, &ex):
		e := x.thrown(ex.Value())
		if e.Line == 0 {
			for _, f := range ex.Stack() {
				if f.SrcName() == programName {
					e.Line = f.Position().Line
					break
				}
			}
			x.withSource(e)
		}
		return e
	case errors.As(err, &so):
		return &Error{Kind: KindException, Msg: "RangeError: maximum call stack size exceeded"}
	}
	return &Error{Kind: KindException, Msg: err.Error()}
}

// lineOf finds the first "program.ts:LINE:" of a stack trace.
func lineOf(stack string) int {
	i := strings.Index(stack, programName+":")
	if i < 0 {
		return 0
	}
	rest := stack[i+len(programName)+1:]
	j := strings.IndexByte(rest, ':')
	if j < 0 {
		return 0
	}
	n, _ := strconv.Atoi(rest[:j])
	return n
}

// exceptionText is the message of an error thrown while encoding a value.
func exceptionText(err error) string {
	if ex := (*goja.Exception)(nil); errors.As(err, &ex) {
		return ex.Value().String()
	}
	return err.Error()
}

// deliver hands j to the loop, or drops it once the loop has ended. Safe from any
// goroutine.
func (x *run) deliver(j job) {
	select {
	case x.jobs <- j:
	case <-x.done:
	}
}
