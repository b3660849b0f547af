package mcpclient

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cordisgo/harness/plugins/toolregistry"
)

// Task is the state of one task (MCP's tasks utility, protocol 2025-11-25): a request that
// runs while its requester polls. It is a plain value, as the specification's Task.
type Task struct {
	TaskID        string `json:"taskId"`
	Status        string `json:"status"`
	StatusMessage string `json:"statusMessage,omitempty"`
	CreatedAt     string `json:"createdAt"`
	LastUpdatedAt string `json:"lastUpdatedAt"`
	// TTL is how long, in milliseconds from its creation, the receiver keeps the task (nil:
	// unlimited); PollInterval the receiver's suggested wait between polls (0: none said).
	TTL          *int64 `json:"ttl"`
	PollInterval int64  `json:"pollInterval,omitempty"`
}

// The task statuses.
const (
	TaskWorking       = "working"
	TaskInputRequired = "input_required"
	TaskCompleted     = "completed"
	TaskFailed        = "failed"
	TaskCancelled     = "cancelled"
)

// Terminal reports whether the task ended (completed, failed or cancelled).
func (t Task) Terminal() bool {
	return t.Status == TaskCompleted || t.Status == TaskFailed || t.Status == TaskCancelled
}

// The request and result types of the tasks methods, on the SDK's extension points (custom
// methods, params and results of our own).
type (
	taskParams struct {
		TTL *int64 `json:"ttl,omitempty"`
	}
	// taskCallParams is a tools/call augmented with a task.
	taskCallParams struct {
		mcp.ParamsBase
		Name      string     `json:"name"`
		Arguments any        `json:"arguments,omitempty"`
		Task      taskParams `json:"task"`
	}
	taskIDParams struct {
		mcp.ParamsBase
		TaskID string `json:"taskId"`
	}
	cursorParams struct {
		mcp.ParamsBase
		Cursor string `json:"cursor,omitempty"`
	}
	taskResult struct {
		mcp.ResultBase
		Task
	}
	listTasksResult struct {
		mcp.ResultBase
		Tasks      []Task `json:"tasks"`
		NextCursor string `json:"nextCursor,omitempty"`
	}
	createTaskResult struct {
		mcp.ResultBase
		Task Task `json:"task"`
	}
	// initParams is an initialize request whose capabilities include tasks, which the SDK's
	// ClientCapabilities cannot hold.
	initParams struct {
		mcp.ParamsBase
		ProtocolVersion string              `json:"protocolVersion"`
		ClientInfo      *mcp.Implementation `json:"clientInfo"`
		Capabilities    map[string]any      `json:"capabilities"`
	}
)

// anyResult is a result of any shape (a stored result a tasks/result returns).
type anyResult struct {
	mcp.ResultBase
	v map[string]any
}

func (r *anyResult) MarshalJSON() ([]byte, error) { return json.Marshal(r.v) }

// registerTaskMethods lets c send the tasks methods.
func registerTaskMethods(c *mcp.Client) {
	_ = mcp.AddSendingCustomMethod[*taskIDParams, *taskResult](c, "tasks/get")
	_ = mcp.AddSendingCustomMethod[*taskIDParams, *taskResult](c, "tasks/cancel")
	_ = mcp.AddSendingCustomMethod[*taskIDParams, *mcp.CallToolResult](c, "tasks/result")
	_ = mcp.AddSendingCustomMethod[*cursorParams, *listTasksResult](c, "tasks/list")
}

// serverTasks is what a server's tasks capability allows.
type serverTasks struct {
	toolsCall, list, cancel bool
}

func parseServerTasks(res *mcp.InitializeResult) serverTasks {
	if res == nil {
		return serverTasks{}
	}
	var caps struct {
		List     *struct{} `json:"list"`
		Cancel   *struct{} `json:"cancel"`
		Requests struct {
			Tools struct {
				Call *struct{} `json:"call"`
			} `json:"tools"`
		} `json:"requests"`
	}
	if !metaValue(res.Meta, metaServerTasks, &caps) {
		return serverTasks{}
	}
	return serverTasks{toolsCall: caps.Requests.Tools.Call != nil, list: caps.List != nil, cancel: caps.Cancel != nil}
}

// taskSupportOf returns a listed tool's execution.taskSupport ("" when it says none).
func taskSupportOf(t *mcp.Tool) string {
	var e struct {
		TaskSupport string `json:"taskSupport"`
	}
	if metaValue(t.Meta, metaExecution, &e) {
		return e.TaskSupport
	}
	return ""
}

// tasksMiddleware is the sending middleware of every session: its initialize declares the
// tasks capability (what the session answers as tasks: g.offered), and a tools/call marked
// with metaTask is sent augmented with a task.
func tasksMiddleware(g *generation) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(cx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			switch p := req.GetParams().(type) {
			case *mcp.InitializeParams:
				if p == nil || p.ProtocolVersion < "2025-11-25" {
					break
				}
				ip := &initParams{ProtocolVersion: p.ProtocolVersion, ClientInfo: p.ClientInfo, Capabilities: capabilitiesWithTasks(p.Capabilities, g.offered)}
				ip.Meta = p.Meta
				return next(cx, method, &mcp.ClientRequest[*initParams]{Session: req.GetSession().(*mcp.ClientSession), Params: ip})
			case *mcp.CallToolParams:
				var tp taskParams
				if p == nil || !metaValue(p.Meta, metaTask, &tp) {
					break
				}
				tc := &taskCallParams{Name: p.Name, Arguments: p.Arguments, Task: tp}
				tc.Meta = metaWithout(p.Meta, metaTask)
				return next(cx, method, &mcp.ClientRequest[*taskCallParams]{Session: req.GetSession().(*mcp.ClientSession), Params: tc})
			}
			return next(cx, method, req)
		}
	}
}

// metaWithout returns a copy of m without key.
func metaWithout(m mcp.Meta, key string) mcp.Meta {
	out := make(mcp.Meta, len(m))
	for k, v := range m {
		if k != key {
			out[k] = v
		}
	}
	return out
}

// capabilitiesWithTasks is caps as the SDK would send them, with the tasks capability:
// tasks/list and tasks/cancel, and the requests the session runs as tasks when a server
// asks (sampling and elicitation, when it declares them).
func capabilitiesWithTasks(caps *mcp.ClientCapabilities, o offer) map[string]any {
	out := map[string]any{}
	if caps != nil {
		if b, err := json.Marshal(caps); err == nil {
			_ = json.Unmarshal(b, &out)
		}
		delete(out, "roots")     // the SDK's Roots is a struct, always encoded; RootsV2 says
		if caps.RootsV2 != nil { //nolint:staticcheck // SEP-2577: roots stay for peers on protocol versions that have them (2025-11-25)
			out["roots"] = caps.RootsV2 //nolint:staticcheck // SEP-2577: roots stay for peers on protocol versions that have them (2025-11-25)
		}
	}
	requests := map[string]any{}
	if o.sampling {
		requests["sampling"] = map[string]any{"createMessage": map[string]any{}}
	}
	if len(o.modes) > 0 {
		requests["elicitation"] = map[string]any{"create": map[string]any{}}
	}
	out["tasks"] = map[string]any{"list": map[string]any{}, "cancel": map[string]any{}, "requests": requests}
	return out
}

// taskTime is t in the specification's format.
func taskTime(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// newTaskID returns a random task ID.
func newTaskID() string { return "harness-" + rand.Text() }

// Requester side: the client calls a tool as a task.

// defaultTaskPoll is the poll interval when the server suggests none; minTaskPoll and
// maxTaskPoll bound what a server suggests.
const (
	defaultTaskPoll = time.Second
	minTaskPoll     = 100 * time.Millisecond
	maxTaskPoll     = 30 * time.Second
)

// taskCancelTimeout bounds the tasks/cancel sent when a task's caller goes away.
const taskCancelTimeout = 5 * time.Second

// longCall is how long a tool's last call must have taken for the next one to go as a
// task when the tool allows it (execution.taskSupport "optional").
const longCall = 10 * time.Second

// asTask reports whether a call of t goes as a task: the server accepts task-augmented
// tools/call, and the tool requires it, or allows it and the call is expected to be long
// (the tool's last call on this client took longCall or more).
func (s *supervisor) asTask(cx context.Context, g *generation, t *remoteTool) bool {
	if !g.tasks.toolsCall {
		return false
	}
	switch t.taskSupport {
	case "required":
		return true
	case "optional":
		return taskStatusSink(cx) != nil || time.Duration(t.lastTook.Load()) >= longCall
	}
	return false
}

// taskCallKey carries the status sink of WithTaskCall.
type taskCallKey struct{}

// WithTaskCall returns cx whose tool calls to MCP servers go as tasks whenever the tool
// allows it (execution.taskSupport "optional" as well as "required"), each status of the
// task (the server's answer to each tasks/get) passed to status, which must return
// quickly. A TaskServer runs the downstream calls it serves as tasks with it, so that the
// downstream task mirrors the upstream one.
func WithTaskCall(cx context.Context, status func(Task)) context.Context {
	return context.WithValue(cx, taskCallKey{}, status)
}

func taskStatusSink(cx context.Context) func(Task) {
	f, _ := cx.Value(taskCallKey{}).(func(Task))
	return f
}

// callAsTask runs one tools/call as a task: created with the call (params.task), polled
// with tasks/get at the server's pollInterval (each answer reported as the call's progress,
// and counted as progress for toolCallTimeoutMs), and its result read with tasks/result
// once it ends, or as soon as the server needs input (input_required: the questions it
// then sends are related to the task, and reach the call's caller through the usual
// responders). When cx ends first, the task is cancelled (tasks/cancel).
func (s *supervisor) callAsTask(cx context.Context, g *generation, f *inflight, params *mcp.CallToolParams) (*mcp.CallToolResult, error) {
	p := *params
	p.Meta = withMeta(params.Meta, metaTask, taskParams{})
	created, err := g.conn.Session().CallTool(cx, &p)
	if err != nil {
		return nil, err
	}
	var task Task
	if !metaValue(created.Meta, metaCreatedTask, &task) || task.TaskID == "" {
		return created, nil // the server answered at once, as it may
	}
	forget := g.trackTask(task.TaskID, f.caller)
	defer forget()
	s.log.Info("tool call runs as a task", "tool", f.target, "task", task.TaskID)
	pcx, stopPolling := context.WithCancel(cx)
	fetch := make(chan struct{}) // closed when the result is worth asking for
	polled := make(chan error, 1)
	go func() { polled <- s.pollTask(pcx, g, f, task, fetch) }()
	var res *mcp.CallToolResult
	select {
	case <-fetch:
	case err = <-polled: // a polling error, or cx ended
		polled <- err // for the wait below
	case <-cx.Done():
	}
	if err == nil && cx.Err() == nil {
		res, err = mcp.CallCustomMethod[*taskIDParams, *mcp.CallToolResult](cx, g.conn.Session(), "tasks/result", &taskIDParams{TaskID: task.TaskID})
	}
	stopPolling()
	if perr := <-polled; perr != nil && res != nil { // waited for: it reports nothing after the call ended
		s.log.Debug("polling a task failed while its result was read", "task", task.TaskID, "err", s.scrubErr(perr))
	}
	if cx.Err() != nil {
		if res, ok := toolregistry.KeepInBackground(cx, s.backgroundTask(g, f, task.TaskID)); ok {
			s.log.Info("task kept in the background: its caller stopped waiting", "tool", f.target, "task", task.TaskID)
			return mcpResult(res), nil
		}
		s.cancelTask(g, task.TaskID)
		return nil, context.Cause(cx)
	}
	return res, err
}

// backgroundTask is the task id, created by the call f on g, as work its caller may keep in
// the background: its status (tasks/get), its result (tasks/result, the server's questions
// then attributed to whoever asks for it) and its cancellation, while g's connection lasts.
func (s *supervisor) backgroundTask(g *generation, f *inflight, id string) *toolregistry.Background {
	server := s.cfg.ServerName
	live := func() error {
		if g.life.Err() != nil {
			return fmt.Errorf("mcp server %q: the connection that ran task %s ended, and the task with it (a stdio server's tasks end with its process)", server, id)
		}
		return nil
	}
	return &toolregistry.Background{ID: id, Server: server, Tool: f.target, CallID: f.callID,
		Status: func(cx context.Context) (string, string, error) {
			if err := live(); err != nil {
				return "", "", err
			}
			res, err := mcp.CallCustomMethod[*taskIDParams, *taskResult](cx, g.conn.Session(), "tasks/get", &taskIDParams{TaskID: id})
			if err != nil {
				return "", "", fmt.Errorf("mcp server %q: tasks/get %s: %w", server, id, err)
			}
			return res.Status, res.StatusMessage, nil
		},
		Result: func(cx context.Context) (*toolregistry.Result, error) {
			if err := live(); err != nil {
				return nil, err
			}
			forget := g.trackTask(id, cx)
			defer forget()
			res, err := mcp.CallCustomMethod[*taskIDParams, *mcp.CallToolResult](cx, g.conn.Session(), "tasks/result", &taskIDParams{TaskID: id})
			if err != nil {
				return nil, fmt.Errorf("mcp server %q: tasks/result %s: %w", server, id, err)
			}
			return AdaptResult(f.target, res, nil, s.cfg.MaxOutputBytes), nil
		},
		Cancel: func(cx context.Context) error {
			if err := live(); err != nil {
				return err
			}
			_, err := mcp.CallCustomMethod[*taskIDParams, *taskResult](cx, g.conn.Session(), "tasks/cancel", &taskIDParams{TaskID: id})
			return err
		},
	}
}

// mcpResult is a registry result (text only: what a caller keeping a call's work in the
// background says of it) as an MCP tool result.
func mcpResult(r *toolregistry.Result) *mcp.CallToolResult {
	out := &mcp.CallToolResult{IsError: r != nil && r.IsError}
	if r != nil {
		out.Content = []mcp.Content{&mcp.TextContent{Text: r.Text()}}
	}
	return out
}

// pollTask polls task until it ends or needs input (then it closes fetch and goes on
// polling, to show the status, until pcx ends). It returns a polling error.
func (s *supervisor) pollTask(pcx context.Context, g *generation, f *inflight, task Task, fetch chan struct{}) error {
	fetched := false
	sink := taskStatusSink(pcx)
	n := 0
	for {
		n++
		s.taskProgress(g, f, task, n)
		if sink != nil {
			sink(task)
		}
		if !fetched && (task.Terminal() || task.Status == TaskInputRequired) {
			close(fetch)
			fetched = true
		}
		if task.Terminal() {
			return nil
		}
		wait := time.Duration(task.PollInterval) * time.Millisecond
		if wait <= 0 {
			wait = defaultTaskPoll
		}
		timer := time.NewTimer(min(max(wait, minTaskPoll), maxTaskPoll))
		select {
		case <-pcx.Done():
			timer.Stop()
			return nil
		case <-timer.C:
		}
		res, err := mcp.CallCustomMethod[*taskIDParams, *taskResult](pcx, g.conn.Session(), "tasks/get", &taskIDParams{TaskID: task.TaskID})
		if err != nil {
			if pcx.Err() != nil {
				return nil
			}
			return fmt.Errorf("tasks/get %s: %w", task.TaskID, err)
		}
		task = res.Task
	}
}

// cancelTask sends tasks/cancel for a task whose caller went away, when the server offers
// it; a refusal (the task ended meanwhile) is logged.
func (s *supervisor) cancelTask(g *generation, id string) {
	if !g.tasks.cancel || g.life.Err() != nil {
		return
	}
	cx, cancel := context.WithTimeout(g.life, taskCancelTimeout)
	defer cancel()
	if _, err := mcp.CallCustomMethod[*taskIDParams, *taskResult](cx, g.conn.Session(), "tasks/cancel", &taskIDParams{TaskID: id}); err != nil {
		s.log.Info("tasks/cancel refused", "task", id, "err", s.scrubErr(err))
		return
	}
	s.log.Info("task cancelled: its caller went away", "task", id)
}

// taskProgress reports a task's status as the call's progress: a ProgressEvent (the
// terminal's progress line, the page's calls in flight) and, for a gateway, a progress
// notice with the call's token; it also counts as progress for toolCallTimeoutMs.
func (s *supervisor) taskProgress(g *generation, f *inflight, task Task, n int) {
	msg := "task " + task.Status
	if task.StatusMessage != "" {
		msg += ": " + task.StatusMessage
	}
	p := &mcp.ProgressNotificationParams{ProgressToken: f.wire, Progress: float64(n), Message: msg}
	s.onProgress(g, p)
	if u := s.upstream; u != nil {
		u.notify(Notice{Kind: NoticeProgress, Progress: p})
	}
}

// causeKey carries the call a server request was attributed to when it arrived, for a
// request that runs later (as a task).
type causeKey struct{}

type causeOf struct{ cx context.Context }

// withCause returns cx carrying callcx (nil: attributed to no call) as the cause of the
// server request handled with it.
func withCause(cx, callcx context.Context) context.Context {
	return context.WithValue(cx, causeKey{}, causeOf{callcx})
}

// trackTask records that the task id was created by the call of caller, so that the
// server's requests related to it reach that caller; forget removes it.
func (g *generation) trackTask(id string, callcx context.Context) (forget func()) {
	g.tasksMu.Lock()
	if g.taskCallers == nil {
		g.taskCallers = map[string]context.Context{}
	}
	g.taskCallers[id] = callcx
	g.tasksMu.Unlock()
	return func() {
		g.tasksMu.Lock()
		delete(g.taskCallers, id)
		g.tasksMu.Unlock()
	}
}

// taskCaller returns the caller of the task id this client created, or nil.
func (g *generation) taskCaller(id string) context.Context {
	g.tasksMu.Lock()
	defer g.tasksMu.Unlock()
	return g.taskCallers[id]
}

// relatedTask returns the task a message's _meta relates it to, or "".
func relatedTask(meta mcp.Meta) string {
	var rt struct {
		TaskID string `json:"taskId"`
	}
	if metaValue(meta, metaRelatedTask, &rt) {
		return rt.TaskID
	}
	return ""
}
