package ptc

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/dop251/goja"
	"github.com/dop251/goja/parser"

	"github.com/cordisgo/harness/permission"
	"github.com/cordisgo/harness/plugins/toolregistry"
)

// preludeSrc defines what the program sees besides the tools, console and sleep.
const preludeSrc = `class ToolCallError extends Error {
	constructor(tool, message, code) {
		super(message);
		this.name = "ToolCallError";
		this.tool = tool;
		this.code = code;
	}
}
ToolCallError;`

var prelude = goja.MustCompile("prelude.js", preludeSrc, true)

// maxCallDepth bounds the program's call stack (goja's default is the Go heap).
const maxCallDepth = 10_000

// setup installs the globals of one run: tools, console, sleep, atob, btoa, describe,
// ToolCallError, and the allocation guards.
func (x *run) setup() error {
	vm := x.vm
	vm.SetParserOptions(parser.WithDisableSourceMaps) // eval and Function read no files
	vm.SetMaxCallStackSize(maxCallDepth)
	jsonObj := vm.Get("JSON").ToObject(vm)
	x.stringify, _ = goja.AssertFunction(jsonObj.Get("stringify"))
	x.parse, _ = goja.AssertFunction(jsonObj.Get("parse"))
	ctor, err := vm.RunProgram(prelude)
	if err != nil {
		return err
	}
	x.errCtor = ctor
	g := vm.GlobalObject()
	if err := g.DefineDataProperty("ToolCallError", ctor, goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_FALSE); err != nil {
		return err
	}

	tools := vm.NewObject()
	if err := tools.SetPrototype(nil); err != nil {
		return err
	}
	x.tools = x.r.reg.List(x.c)
	for _, in := range x.tools {
		if in.Name == toolregistry.ReservedRunCode {
			continue
		}
		fn := vm.ToValue(x.toolFunc(in.Name, x.r.safe(in)))
		if err := tools.DefineDataProperty(in.Name, fn, goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_TRUE); err != nil {
			return err
		}
	}
	if err := freeze(vm, tools); err != nil {
		return err
	}
	if err := g.DefineDataProperty("tools", tools, goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_TRUE); err != nil {
		return err
	}

	console := vm.NewObject()
	for _, level := range []string{"log", "info", "debug", "warn", "error"} {
		if err := console.Set(level, x.consoleFunc(level)); err != nil {
			return err
		}
	}
	if err := freeze(vm, console); err != nil {
		return err
	}
	if err := g.DefineDataProperty("console", console, goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_FALSE); err != nil {
		return err
	}
	if err := g.DefineDataProperty("sleep", vm.ToValue(x.sleep), goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_FALSE); err != nil {
		return err
	}
	for name, fn := range map[string]func(goja.FunctionCall) goja.Value{"atob": x.atob, "btoa": x.btoa, "describe": x.describeTools} {
		if err := g.DefineDataProperty(name, vm.ToValue(fn), goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_FALSE); err != nil {
			return err
		}
	}
	return x.guard()
}

// atob decodes base64 (the data of image, audio and blob content) to a binary string: one
// character per byte.
func (x *run) atob(fc goja.FunctionCall) goja.Value {
	in, n := x.stringArg(fc.Argument(0))
	x.allow("atob of "+strconv.FormatInt(n, 10)+" characters", n*6) // the bytes, their runes, the string
	s := strings.TrimRight(in.String(), "=")
	b, err := base64.RawStdEncoding.DecodeString(s)
	if err != nil {
		panic(x.vm.NewTypeError("atob: not base64: " + err.Error()))
	}
	r := make([]rune, len(b))
	for i, c := range b {
		r[i] = rune(c)
	}
	return x.vm.ToValue(string(r))
}

// btoa encodes a binary string (characters up to 0xFF) as base64.
func (x *run) btoa(fc goja.FunctionCall) goja.Value {
	in, n := x.stringArg(fc.Argument(0))
	x.allow("btoa of "+strconv.FormatInt(n, 10)+" characters", n*5) // the string, its bytes, base64
	s := in.String()
	b := make([]byte, 0, len(s))
	for _, r := range s {
		if r > 0xFF {
			panic(x.vm.NewTypeError("btoa: the string has a character above 0xFF"))
		}
		b = append(b, byte(r))
	}
	return x.vm.ToValue(base64.StdEncoding.EncodeToString(b))
}

// describeTools is describe(...names): the full declarations of the tools whose names match
// its arguments (a name, or a prefix ending in *), for the catalog in the system prompt has
// only a line a tool, or less.
func (x *run) describeTools(fc goja.FunctionCall) goja.Value {
	patterns := make([]string, len(fc.Arguments))
	for i, a := range fc.Arguments {
		patterns[i] = a.String()
	}
	text, n := describe(x.tools, patterns)
	if n == 0 {
		panic(x.vm.NewTypeError("describe: no tool matches " + strings.Join(patterns, ", ") + "; pass tools' names as the catalog writes them, or a prefix ending in *"))
	}
	return x.vm.ToValue(text)
}

// freeze calls Object.freeze(o).
func freeze(vm *goja.Runtime, o *goja.Object) error {
	f, _ := goja.AssertFunction(vm.Get("Object").ToObject(vm).Get("freeze"))
	_, err := f(goja.Undefined(), o)
	return err
}

// ReadOnly reports whether calls of a tool may overlap other calls by default: its metadata
// says it is read-only and not destructive (the MCP client copies the readOnlyHint and
// destructiveHint annotations into Meta).
func ReadOnly(in toolregistry.Info) bool { return permission.ReadOnly(in.Meta) }

// pending is one call of the program, queued or running.
type pending struct {
	id      string
	tool    string
	args    json.RawMessage
	safe    bool
	line    int
	resolve func(any) error
	reject  func(any) error
}

// toolFunc is the function tools[name]: it queues a call and returns its promise.
func (x *run) toolFunc(name string, safe bool) func(goja.FunctionCall) goja.Value {
	return func(fc goja.FunctionCall) goja.Value {
		args := x.argsJSON(name, fc.Argument(0))
		if x.made >= x.l.MaxToolCalls {
			x.fail(&Error{Kind: KindToolCallLimit, Msg: "the program made more than " + strconv.Itoa(x.l.MaxToolCalls) + " tool calls (tool call limit)"})
			return goja.Undefined()
		}
		x.made++
		p, resolve, reject := x.vm.NewPromise()
		h := &pending{
			id:   x.callID + ":code:" + strconv.Itoa(x.made),
			tool: name, args: args, safe: safe, line: x.callerLine(),
			resolve: resolve, reject: reject,
		}
		x.queue = append(x.queue, h)
		x.pump()
		return x.vm.ToValue(p)
	}
}

// argsJSON encodes a call's argument (an object, or nothing for "{}").
func (x *run) argsJSON(name string, v goja.Value) json.RawMessage {
	if v == nil || goja.IsUndefined(v) || goja.IsNull(v) {
		return json.RawMessage("{}")
	}
	if _, ok := v.(*goja.Object); !ok {
		panic(x.vm.NewTypeError("tools[" + strconv.Quote(name) + "] takes one object of arguments, got " + v.String()))
	}
	s, err := x.stringify(goja.Undefined(), v)
	if err != nil {
		panic(err)
	}
	if s == nil || goja.IsUndefined(s) || !strings.HasPrefix(s.String(), "{") {
		panic(x.vm.NewTypeError("tools[" + strconv.Quote(name) + "] takes one object of arguments"))
	}
	return json.RawMessage(s.String())
}

// callerLine is the program line of the innermost program frame.
func (x *run) callerLine() int {
	for _, f := range x.vm.CaptureCallStack(8, nil) {
		if f.SrcName() == programName {
			return f.Position().Line
		}
	}
	return 0
}

// pump moves the queued calls that may start to the ready list, in order, under the
// registry's batch rule ([toolregistry.Scheduler]): a safe call alongside other safe calls
// up to MaxConcurrentCalls; any other call alone, once the calls before it have finished
// (and the calls after it wait for it). [run.launch] starts them once the program yields.
func (x *run) pump() {
	for len(x.queue) > 0 && !x.stopped() {
		h := x.queue[0]
		if !x.sched.Start(h.safe) {
			return
		}
		x.queue[0] = nil
		x.queue = x.queue[1:]
		x.ready = append(x.ready, h)
	}
}

// launch starts the ready calls. The only call in flight runs on the loop's goroutine, which
// has nothing else to do meanwhile (the common "await one call after another"); calls that
// overlap run on goroutines of their own.
func (x *run) launch() {
	for len(x.ready) > 0 {
		if x.stopped() {
			clear(x.ready)
			x.ready = x.ready[:0]
			return
		}
		if len(x.ready) == 1 && x.sched.Running() == 1 {
			h := x.ready[0]
			x.ready[0] = nil
			x.ready = x.ready[:0]
			x.enter(x.call(h))
			continue
		}
		for i, h := range x.ready {
			x.ready[i] = nil
			x.wg.Add(1)
			go func() {
				defer x.wg.Done()
				x.deliver(x.call(h))
			}()
		}
		x.ready = x.ready[:0]
	}
}

// call runs one call through the registry and returns the job that settles its promise on
// the loop's goroutine.
func (x *run) call(h *pending) job {
	start := time.Now()
	opts := x.r.exec
	opts.CallID = h.id
	res, err := x.r.reg.Execute(x.calls, x.c, h.tool, h.args, opts)
	rec := Call{ID: h.id, Tool: h.tool, Args: h.args, Outcome: toolregistry.CodeOK, Duration: time.Since(start)}
	var terr *toolregistry.ToolError
	if errors.As(err, &terr) {
		rec.Outcome, rec.Error = terr.Code, terr.Msg
	} else if err != nil {
		rec.Outcome, rec.Error = toolregistry.CodeToolError, err.Error()
	}
	x.mu.Lock()
	x.record = append(x.record, rec)
	if err == nil {
		for _, c := range res.Content {
			if c.Type == toolregistry.ContentImage && c.Attachment != nil {
				x.images = append(x.images, *c.Attachment)
			}
		}
	}
	x.mu.Unlock()
	return func() {
		x.sched.Finish(h.safe)
		switch {
		case err != nil:
			msg := err.Error()
			code := string(toolregistry.CodeToolError)
			if terr != nil {
				msg, code = terr.Msg, string(terr.Code)
			}
			_ = h.reject(x.toolError(h, msg, code))
		default:
			if raw := x.resultJSON(res); !x.resultTooLarge(h, raw) {
				_ = h.resolve(x.resultValue(raw))
			}
		}
		x.pump()
	}
}

// toolError builds the ToolCallError a failed call rejects with; its stack names the line
// of the call.
func (x *run) toolError(h *pending, msg, code string) goja.Value {
	o, err := x.vm.New(x.errCtor, x.vm.ToValue(h.tool), x.vm.ToValue(msg), x.vm.ToValue(code))
	if err != nil {
		return x.vm.ToValue(msg)
	}
	stack := "ToolCallError: " + msg
	if h.line > 0 {
		stack += "\n\tat " + programName + ":" + strconv.Itoa(h.line) + ":1"
	}
	_ = o.Set("stack", stack)
	return o
}

// resultValue is what a call resolves to: its result's JSON (resultJSON), parsed.
func (x *run) resultValue(raw json.RawMessage) goja.Value {
	v, err := x.parse(goja.Undefined(), x.vm.ToValue(string(raw)))
	if err != nil {
		return x.vm.ToValue(string(raw))
	}
	return v
}

// resultJSON is the JSON of a result as the program receives it: the canonical MCP result
// ({content, structuredContent?, isError?}) when the tool kept one, else one built from the
// registry's content blocks (images as base64 data).
func (x *run) resultJSON(res *toolregistry.Result) json.RawMessage {
	if len(res.Raw) > 0 && res.Raw[0] == '{' {
		return res.Raw
	}
	return x.canonical(res)
}

// resultTooLarge stops the run when what the program would build of a call's result does
// not fit in what the run has left of its memory limit (the guarded parse would refuse it
// too; this names the tool).
func (x *run) resultTooLarge(h *pending, raw json.RawMessage) bool {
	if e := x.exceeds("the result of "+h.tool+" ("+size(int64(len(raw)))+" of JSON)", jsonCostBytes(raw)); e != nil {
		x.fail(e)
		return true
	}
	return false
}

// canonical builds the MCP shape of a result without Raw.
func (x *run) canonical(res *toolregistry.Result) json.RawMessage {
	type block struct {
		Type     string `json:"type"`
		Text     string `json:"text,omitempty"`
		Data     string `json:"data,omitempty"`
		MimeType string `json:"mimeType,omitempty"`
	}
	out := struct {
		Content           []block         `json:"content"`
		StructuredContent json.RawMessage `json:"structuredContent,omitempty"`
	}{Content: []block{}, StructuredContent: res.Structured}
	for _, c := range res.Content {
		switch c.Type {
		case toolregistry.ContentImage:
			if c.Attachment == nil {
				continue
			}
			data, mt, ok := x.r.reg.Attachments().Get(c.Attachment.ID)
			if !ok {
				out.Content = append(out.Content, block{Type: "text", Text: c.ModelText() + " (no longer stored)"})
				continue
			}
			out.Content = append(out.Content, block{Type: "image", Data: base64.StdEncoding.EncodeToString(data), MimeType: mt})
		default:
			out.Content = append(out.Content, block{Type: "text", Text: c.ModelText()})
		}
	}
	b, _ := json.Marshal(out)
	return b
}

// consoleFunc writes one line to the captured console output.
func (x *run) consoleFunc(level string) func(goja.FunctionCall) goja.Value {
	prefix := ""
	if level == "warn" || level == "error" {
		prefix = "[" + level + "] "
	}
	return func(fc goja.FunctionCall) goja.Value {
		var b bytes.Buffer
		b.WriteString(prefix)
		for i, a := range fc.Arguments {
			if i > 0 {
				b.WriteByte(' ')
			}
			// Past the output limit nothing more is kept: a long string is cut before it
			// is converted.
			left := x.l.MaxOutputBytes - x.console.Len() - b.Len() + 1
			if s, ok := a.(goja.String); ok && s.Length() > left {
				a = s.Substring(0, max(left, 0))
			}
			b.WriteString(x.format(a))
		}
		b.WriteByte('\n')
		if n := x.console.Len() + b.Len(); n > x.l.MaxOutputBytes {
			x.console.Write(b.Bytes()[:x.l.MaxOutputBytes-x.console.Len()])
			x.fail(x.outputLimit(n))
			return goja.Undefined()
		}
		x.console.Write(b.Bytes())
		return goja.Undefined()
	}
}

// format renders a console argument: strings as they are, other values as JSON when they
// have one.
func (x *run) format(v goja.Value) string {
	if s, ok := v.Export().(string); ok {
		return s
	}
	if o, ok := v.(*goja.Object); ok {
		if o.ClassName() == "Error" {
			return x.describe(v)
		}
		if _, fn := goja.AssertFunction(v); !fn {
			if s, err := x.stringify(goja.Undefined(), v); err == nil && s != nil && !goja.IsUndefined(s) {
				return s.String()
			}
		}
	}
	return v.String()
}

// sleep is the one timer: sleep(ms) resolves after ms milliseconds, at most MaxSleepMs.
func (x *run) sleep(fc goja.FunctionCall) goja.Value {
	n := fc.Argument(0).ToFloat()
	if n != n || n < 0 || n > float64(x.l.MaxSleepMs) {
		panic(x.vm.NewTypeError("sleep(ms) takes 0 to " + strconv.Itoa(x.l.MaxSleepMs) + " milliseconds"))
	}
	p, resolve, _ := x.vm.NewPromise()
	x.slept++
	id := x.slept
	t := x.afterFunc(time.Duration(n*float64(time.Millisecond)), func(x *run) {
		x.deliver(func() {
			if s, ok := x.sleeps[id]; ok {
				delete(x.sleeps, id)
				_ = s.resolve(goja.Undefined())
			}
		})
	})
	x.sleeps[id] = sleeping{timer: t, resolve: resolve}
	return x.vm.ToValue(p)
}

// sleeping is a sleep pending: its timer and what resolves its promise.
type sleeping struct {
	timer   *time.Timer
	resolve func(any) error
}
