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

// recvTask is one server request (sampling/createMessage, elicitation/create) the client
// runs as a task because the server asked (params.task). Its fields after mu are guarded by
// mu; done is closed when it ends, after res and err are set.
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

// finish records the end of the task, unless it was cancelled already (a cancelled task
// stays cancelled).
func (t *recvTask) finish(res mcp.Result, err error) {
	t.mu.Lock()
	if t.task.Status != TaskCancelled {
		t.res, t.err = res, err
		t.task.Status = TaskCompleted
		if err != nil {
			t.task.Status, t.task.StatusMessage = TaskFailed, err.Error()
		}
		t.task.LastUpdatedAt = taskTime(time.Now())
	}
	t.mu.Unlock()
	close(t.done)
}

// recvTasks are the tasks a session runs for its server. It is safe for concurrent use.
type recvTasks struct {
	mu    sync.Mutex
	tasks map[string]*recvTask
}

// start runs fn as a new task (its context ends with life, or at tasks/cancel) and returns
// the task as created.
func (rt *recvTasks) start(lifecx context.Context, ttl *int64, fn func(context.Context) (mcp.Result, error)) Task {
	now := time.Now()
	cx, cancel := context.WithCancelCause(context.WithoutCancel(lifecx))
	stop := context.AfterFunc(lifecx, func() { cancel(context.Cause(lifecx)) })
	t := &recvTask{created: now, ttl: ttl, cancel: cancel, done: make(chan struct{}),
		task: Task{TaskID: newTaskID(), Status: TaskWorking, CreatedAt: taskTime(now), LastUpdatedAt: taskTime(now), TTL: ttl, PollInterval: recvTaskPoll.Milliseconds()}}
	rt.mu.Lock()
	if rt.tasks == nil {
		rt.tasks = map[string]*recvTask{}
	}
	rt.pruneLocked(now)
	rt.tasks[t.task.TaskID] = t
	rt.mu.Unlock()
	go func() {
		defer stop()
		defer cancel(nil)
		res, err := fn(cx)
		t.finish(res, err)
	}()
	return t.snapshot()
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
				task := g.recv.start(g.life, tp.TTL, func(tcx context.Context) (mcp.Result, error) {
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
	if method == "tasks/list" {
		return &listTasksResult{Tasks: g.recv.list()}, nil
	}
	t, err := g.recv.get(p.TaskID)
	if err != nil {
		return nil, err
	}
	switch method {
	case "tasks/get":
		return &taskResult{Task: t.snapshot()}, nil
	case "tasks/cancel":
		t.mu.Lock()
		if (Task{Status: t.task.Status}).Terminal() {
			st := t.task.Status
			t.mu.Unlock()
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("task %q is %s already: it cannot be cancelled", p.TaskID, st)}
		}
		t.task.Status, t.task.StatusMessage, t.task.LastUpdatedAt = TaskCancelled, "cancelled by the server", taskTime(time.Now())
		task := t.task
		t.mu.Unlock()
		t.cancel(errors.New("the server cancelled the task"))
		return &taskResult{Task: task}, nil
	case "tasks/result":
		select {
		case <-t.done:
		case <-cx.Done():
			return nil, context.Cause(cx)
		}
		t.mu.Lock()
		res, rerr, st := t.res, t.err, t.task.Status
		t.mu.Unlock()
		if st == TaskCancelled {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("task %q was cancelled", p.TaskID)}
		}
		if rerr != nil {
			return nil, rerr
		}
		return withRelatedTask(res, p.TaskID)
	}
	return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: method + " is not supported"}
}

// withRelatedTask returns res as an object with the related-task _meta the specification
// asks of a tasks/result.
func withRelatedTask(res mcp.Result, id string) (mcp.Result, error) {
	b, err := json.Marshal(res)
	if err != nil {
		return nil, err
	}
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, err
	}
	setMeta(v, metaRelatedTask, map[string]any{"taskId": id})
	return &anyResult{v: v}, nil
}
