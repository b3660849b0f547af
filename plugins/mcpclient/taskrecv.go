package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// recvTaskPoll is the poll interval the client suggests for the tasks it runs for a server.
const recvTaskPoll = 500 * time.Millisecond

// maxRecvTasks bounds the tasks a session keeps for its server: beyond it the oldest ended
// ones go, whatever their ttl.
const maxRecvTasks = 256

// recvTask is one request the receiver runs as a task because the requestor asked
// (params.task): a server's sampling/createMessage or elicitation/create run by the client,
// or a downstream client's tools/call run by a server the harness serves (TaskServer). Its
// fields after mu are guarded by mu; done is closed when it ends, after res and err are set.
type recvTask struct {
	created time.Time
	ttl     *int64
	cancel  context.CancelCauseFunc
	done    chan struct{}

	mu   sync.Mutex
	task Task
	res  mcp.Result
	err  error
}

// snapshot returns the task's state.
func (t *recvTask) snapshot() Task {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.task
}

// setStatus records a status the task's work reports while it runs (working,
// input_required); the end is the run's (finish), and a task that ended keeps it.
func (t *recvTask) setStatus(status, msg string) {
	if (Task{Status: status}).Terminal() {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.task.Terminal() || (t.task.Status == status && t.task.StatusMessage == msg) {
		return
	}
	t.task.Status, t.task.StatusMessage, t.task.LastUpdatedAt = status, msg, taskTime(time.Now())
}

// finish records the end of the task, unless it was cancelled already (a cancelled task
// stays cancelled).
func (t *recvTask) finish(res mcp.Result, err error) {
	t.mu.Lock()
	if t.task.Status != TaskCancelled {
		t.res, t.err = res, err
		t.task.Status, t.task.StatusMessage = TaskCompleted, ""
		if err != nil {
			t.task.Status, t.task.StatusMessage = TaskFailed, err.Error()
		}
		t.task.LastUpdatedAt = taskTime(time.Now())
	}
	t.mu.Unlock()
	close(t.done)
}

// recvTasks are the tasks a receiver runs for one requestor (a client session's server, a
// served session's client). It is safe for concurrent use.
type recvTasks struct {
	mu    sync.Mutex
	tasks map[string]*recvTask
}

// start runs fn as a new task and returns the task as created. fn's context carries the
// values of runcx and ends with it, or at tasks/cancel; fn may report the task's status
// while it runs (update). id is the ID the task gets ("": a new random one).
func (rt *recvTasks) start(runcx context.Context, id string, ttl *int64, fn func(cx context.Context, update func(status, msg string)) (mcp.Result, error)) Task {
	now := time.Now()
	if id == "" {
		id = newTaskID()
	}
	cx, cancel := context.WithCancelCause(context.WithoutCancel(runcx))
	stop := context.AfterFunc(runcx, func() { cancel(context.Cause(runcx)) })
	t := &recvTask{created: now, ttl: ttl, cancel: cancel, done: make(chan struct{}),
		task: Task{TaskID: id, Status: TaskWorking, CreatedAt: taskTime(now), LastUpdatedAt: taskTime(now), TTL: ttl, PollInterval: recvTaskPoll.Milliseconds()}}
	rt.mu.Lock()
	if rt.tasks == nil {
		rt.tasks = map[string]*recvTask{}
	}
	rt.pruneLocked(now)
	rt.tasks[t.task.TaskID] = t
	rt.mu.Unlock()
	created := t.snapshot()
	go func() {
		defer stop()
		defer cancel(nil)
		res, err := fn(cx, t.setStatus)
		t.finish(res, err)
	}()
	return created
}

// pruneLocked forgets the tasks past their ttl, and the oldest ended ones beyond
// maxRecvTasks.
func (rt *recvTasks) pruneLocked(now time.Time) {
	var ended []*recvTask
	for id, t := range rt.tasks {
		if t.ttl != nil && now.Sub(t.created) > time.Duration(*t.ttl)*time.Millisecond {
			t.cancel(errors.New("the task's ttl elapsed"))
			delete(rt.tasks, id)
			continue
		}
		select {
		case <-t.done:
			ended = append(ended, t)
		default:
		}
	}
	if len(rt.tasks) < maxRecvTasks {
		return
	}
	sort.Slice(ended, func(i, j int) bool { return ended[i].created.Before(ended[j].created) })
	for _, t := range ended[:min(len(ended), len(rt.tasks)-maxRecvTasks+1)] {
		delete(rt.tasks, t.task.TaskID)
	}
}

func (rt *recvTasks) get(id string) (*recvTask, error) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	rt.pruneLocked(time.Now())
	t := rt.tasks[id]
	if t == nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("task %q not found (unknown, or past its ttl)", id)}
	}
	return t, nil
}

// list returns the tasks kept, oldest first.
func (rt *recvTasks) list() []Task {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	rt.pruneLocked(time.Now())
	out := make([]Task, 0, len(rt.tasks))
	for _, t := range rt.tasks {
		out = append(out, t.snapshot())
	}
	sort.Slice(out, func(i, j int) bool { return out[i].CreatedAt < out[j].CreatedAt })
	return out
}

// getTask answers tasks/get.
func (rt *recvTasks) getTask(id string) (*taskResult, error) {
	t, err := rt.get(id)
	if err != nil {
		return nil, err
	}
	return &taskResult{Task: t.snapshot()}, nil
}

// cancelTask answers tasks/cancel: by says who cancelled it.
func (rt *recvTasks) cancelTask(id, by string) (*taskResult, error) {
	t, err := rt.get(id)
	if err != nil {
		return nil, err
	}
	t.mu.Lock()
	if t.task.Terminal() {
		st := t.task.Status
		t.mu.Unlock()
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("task %q is %s already: it cannot be cancelled", id, st)}
	}
	t.task.Status, t.task.StatusMessage, t.task.LastUpdatedAt = TaskCancelled, "cancelled by the "+by, taskTime(time.Now())
	task := t.task
	t.mu.Unlock()
	t.cancel(fmt.Errorf("the %s cancelled the task", by))
	return &taskResult{Task: task}, nil
}

// result answers tasks/result: it waits for the task's end (or cx's) and returns what the
// request returned, with the related-task _meta.
func (rt *recvTasks) result(cx context.Context, id string) (*anyResult, error) {
	t, err := rt.get(id)
	if err != nil {
		return nil, err
	}
	select {
	case <-t.done:
	case <-cx.Done():
		return nil, context.Cause(cx)
	}
	t.mu.Lock()
	res, rerr, st := t.res, t.err, t.task.Status
	t.mu.Unlock()
	if st == TaskCancelled {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("task %q was cancelled", id)}
	}
	if rerr != nil {
		return nil, rerr
	}
	return withRelatedTask(res, id)
}

// taskReceiver is the receiving middleware of a session that declares tasks for sampling or
// elicitation: a server's request augmented with a task (params.task, which the shim
// moved to _meta) is answered at once with the task created, and runs on (through the
// usual handlers: responders and samplers looked up as for any request); the server's
// tasks/get, tasks/result, tasks/list and tasks/cancel (tunneled as pings by the shim) are
// answered from the session's tasks.
func (s *supervisor) taskReceiver(g *generation) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(cx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			meta := requestMeta(req)
			switch method {
			case "ping":
				var tun struct {
					Method string          `json:"method"`
					Params json.RawMessage `json:"params"`
				}
				if metaValue(meta, metaTunnel, &tun) {
					return s.tasksMethod(cx, g, tun.Method, tun.Params)
				}
			case "sampling/createMessage", "elicitation/create":
				var tp taskParams
				if !metaValue(meta, metaTask, &tp) {
					break
				}
				if (method == "sampling/createMessage" && !g.offered.sampling) || (method == "elicitation/create" && len(g.offered.modes) == 0) {
					break // not declared for tasks: answered as a plain request (the specification's rule)
				}
				// The caller is found now, while the call that caused the request is in
				// flight; the task runs with the request's values but its own lifetime.
				callcx := g.callOf(cx, meta)
				task := g.recv.start(g.life, "", tp.TTL, func(tcx context.Context, _ func(string, string)) (mcp.Result, error) {
					return next(withCause(tcx, callcx), method, req)
				})
				s.log.Info("server request run as a task", "method", method, "task", task.TaskID)
				return &createTaskResult{Task: task}, nil
			}
			return next(cx, method, req)
		}
	}
}

// requestMeta returns the _meta of the requests taskReceiver looks at (nil for others).
func requestMeta(req mcp.Request) mcp.Meta {
	switch p := req.GetParams().(type) {
	case *mcp.PingParams:
		if p != nil {
			return p.Meta
		}
	case *mcp.CreateMessageWithToolsParams: //nolint:staticcheck // SEP-2577: sampling stays for peers on protocol versions that have it (2025-11-25)
		if p != nil {
			return p.Meta
		}
	case *mcp.ElicitParams:
		if p != nil {
			return p.Meta
		}
	}
	return nil
}

// tasksMethod answers one of the server's tasks requests.
func (s *supervisor) tasksMethod(cx context.Context, g *generation, method string, raw json.RawMessage) (mcp.Result, error) {
	var p struct {
		TaskID string `json:"taskId"`
	}
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &p); err != nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("%s: %v", method, err)}
		}
	}
	switch method {
	case "tasks/list":
		return &listTasksResult{Tasks: g.recv.list()}, nil
	case "tasks/get":
		return g.recv.getTask(p.TaskID)
	case "tasks/cancel":
		return g.recv.cancelTask(p.TaskID, "server")
	case "tasks/result":
		return g.recv.result(cx, p.TaskID)
	}
	return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: method + " is not supported"}
}

// withRelatedTask returns res as an object with the related-task _meta the specification
// asks of a tasks/result.
func withRelatedTask(res mcp.Result, id string) (*anyResult, error) {
	v, err := resultMap(res)
	if err != nil {
		return nil, err
	}
	setMeta(v, metaRelatedTask, map[string]any{"taskId": id})
	return &anyResult{v: v}, nil
}
