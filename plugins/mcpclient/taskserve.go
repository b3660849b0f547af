package mcpclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TaskServer serves the tasks utility (protocol 2025-11-25) to the clients of mcp.Servers
// the harness serves, such as a gateway's routes: a client that calls a tool as a task
// (tools/call with params.task) gets the task at once (a CreateTaskResult), and the call runs
// on through the server's own handler chain while the client polls it (tasks/get), reads its
// result (tasks/result, which waits for the end), lists (tasks/list) and cancels
// (tasks/cancel) it. The call runs with [WithTaskCall]: a tool of an MCP server that supports
// tasks is called as that server's task, whose status (working, input_required and its
// message) is the served task's, and whose questions reach the calling session as any
// request's do, carrying the served task as their related task ([ServedTask]). A tool
// result, isError or not, completes the task; an error fails it.
//
// go-sdk v1.8.0 has no tasks, so a TaskServer works on its extension points: a receiving
// middleware (the task-augmented tools/call; the tasks capability added to the initialize
// result; each listed tool's execution) and custom methods (tasks/*). The SDK drops
// params.task when it decodes a tools/call; [ShimTaskRequest] moves it into _meta before.
// Tasks are offered to sessions of protocol 2025-11-25 (not 2026-07-28, whose drafts rework
// them). A tool the server lists as supporting tasks (it carries the execution a client's
// listing of an MCP server gave it, or [MarkTaskSupport]'s) is listed with taskSupport
// "optional", whatever the MCP server said: a plain call of it is served too (the upstream
// task's status then goes out as progress). A task-augmented call of a tool listed without
// task support gets the error the specification gives (-32601, method not found).
//
// Each session's tasks are its own: another session's tasks/get of it is "not found". A
// task's ttl is honoured, at most 256 are kept per session, and [TaskServer.Forget] (the
// session ended) and [TaskServer.Close] cancel those still running.
//
// Concurrency: every method is safe for concurrent use; a task's run is a goroutine of the
// TaskServer, ended and waited for by Close.
type TaskServer struct {
	life context.Context
	runs sync.WaitGroup

	mu       sync.Mutex
	sessions map[*mcp.ServerSession]*servedSession
	closed   bool
}

// servedSession is the tasks of one downstream session.
type servedSession struct {
	tasks recvTasks
	life  context.Context
	end   context.CancelCauseFunc
}

// errSessionEnded is the cause of the tasks cancelled because their session ended.
var errSessionEnded = errors.New("the session that created the task ended")

// NewTaskServer returns a TaskServer whose tasks run with contexts of lifecx (their values,
// and their end).
func NewTaskServer(lifecx context.Context) *TaskServer {
	return &TaskServer{life: lifecx, sessions: map[*mcp.ServerSession]*servedSession{}}
}

// Serve makes srv serve tasks: the tasks methods, and the middleware. Call it after srv's
// other receiving middleware is added, so that it is the outermost: a task's call then
// goes through the others, as a plain call does, for as long as it runs.
func (ts *TaskServer) Serve(srv *mcp.Server) {
	_ = mcp.AddReceivingCustomMethod(srv, "tasks/get", func(_ context.Context, ss *mcp.ServerSession, p *taskIDParams) (*taskResult, error) {
		return ts.session(ss).tasks.getTask(p.TaskID)
	})
	_ = mcp.AddReceivingCustomMethod(srv, "tasks/cancel", func(_ context.Context, ss *mcp.ServerSession, p *taskIDParams) (*taskResult, error) {
		return ts.session(ss).tasks.cancelTask(p.TaskID, "client")
	})
	_ = mcp.AddReceivingCustomMethod(srv, "tasks/result", func(cx context.Context, ss *mcp.ServerSession, p *taskIDParams) (*anyResult, error) {
		return ts.session(ss).tasks.result(cx, p.TaskID)
	})
	_ = mcp.AddReceivingCustomMethod(srv, "tasks/list", func(_ context.Context, ss *mcp.ServerSession, _ *cursorParams) (*listTasksResult, error) {
		return &listTasksResult{Tasks: ts.session(ss).tasks.list()}, nil
	})
	srv.AddReceivingMiddleware(ts.middleware)
}

// Forget cancels the tasks of ss still running and forgets them: ss ended.
func (ts *TaskServer) Forget(ss *mcp.ServerSession) {
	ts.mu.Lock()
	s := ts.sessions[ss]
	delete(ts.sessions, ss)
	ts.mu.Unlock()
	if s != nil {
		s.end(errSessionEnded)
	}
}

// Close cancels every task still running, with cause, and waits for their runs to return.
func (ts *TaskServer) Close(cause error) {
	ts.mu.Lock()
	ts.closed = true
	sessions := ts.sessions
	ts.sessions = map[*mcp.ServerSession]*servedSession{}
	ts.mu.Unlock()
	for _, s := range sessions {
		s.end(cause)
	}
	ts.runs.Wait()
}

// session returns the tasks of ss, made on first use.
func (ts *TaskServer) session(ss *mcp.ServerSession) *servedSession {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	s := ts.sessions[ss]
	if s == nil {
		s = &servedSession{}
		s.life, s.end = context.WithCancelCause(ts.life)
		if ts.closed {
			s.end(context.Canceled)
		} else {
			ts.sessions[ss] = s
		}
	}
	return s
}

// offersTasks reports whether ss's protocol has tasks (2025-11-25).
func offersTasks(ss *mcp.ServerSession) bool {
	ip := ss.InitializeParams()
	return ip != nil && ip.ProtocolVersion >= "2025-11-25" && ip.ProtocolVersion < "2026-07-28"
}

// middleware runs a task-augmented tools/call as a task, and declares tasks: the
// capability in the initialize result, each tool's execution in tools/list.
func (ts *TaskServer) middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(cx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		ss, _ := req.GetSession().(*mcp.ServerSession)
		if ss == nil {
			return next(cx, method, req)
		}
		switch method {
		case "initialize":
			res, err := next(cx, method, req)
			if ir, ok := res.(*mcp.InitializeResult); ok && err == nil && ir.ProtocolVersion >= "2025-11-25" && ir.ProtocolVersion < "2026-07-28" {
				return withTasksCapability(ir)
			}
			return res, err
		case "tools/list":
			res, err := next(cx, method, req)
			if lr, ok := res.(*mcp.ListToolsResult); ok && err == nil {
				return listedExecution(lr, offersTasks(ss))
			}
			return res, err
		case "tools/call":
			p, ok := req.GetParams().(*mcp.CallToolParamsRaw)
			var tp taskParams
			if !ok || p == nil || !metaValue(p.Meta, metaTask, &tp) {
				break
			}
			plain := *p
			plain.Meta = metaWithout(p.Meta, metaTask)
			if len(plain.Meta) == 0 {
				plain.Meta = nil
			}
			// The task's call is detached from the HTTP request it came in: it keeps who
			// made it (the token), not the request's headers.
			var extra *mcp.RequestExtra
			if ex := req.GetExtra(); ex != nil {
				extra = &mcp.RequestExtra{TokenInfo: ex.TokenInfo}
			}
			if !offersTasks(ss) { // a plain call, as the session's protocol has no tasks
				return next(cx, method, &mcp.CallToolRequest{Session: ss, Params: &plain, Extra: req.GetExtra()})
			}
			switch support, err := toolTaskSupport(cx, next, ss, plain.Name); {
			case err != nil:
				return nil, err
			case support != "optional" && support != "required":
				// The specification's answer; the SDK words every -32601 as its own "method
				// not found: "tools/call"".
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "method not found"}
			}
			run := &mcp.CallToolRequest{Session: ss, Params: &plain, Extra: extra}
			return ts.start(ss, tp, func(tcx context.Context) (mcp.Result, error) {
				return next(tcx, method, run)
			})
		}
		return next(cx, method, req)
	}
}

// toolTaskSupport is the execution.taskSupport the server lists tool with for ss ("" when
// it lists none or does not list the tool), read from its own listing: next is the rest of
// the server's receiving middleware, so the listing is the one ss would get (every page of
// it).
func toolTaskSupport(cx context.Context, next mcp.MethodHandler, ss *mcp.ServerSession, tool string) (string, error) {
	tools, _, err := listAll(func(cursor string) ([]*mcp.Tool, string, error) {
		res, err := next(cx, "tools/list", &mcp.ListToolsRequest{Session: ss, Params: &mcp.ListToolsParams{Cursor: cursor}})
		if err != nil {
			return nil, "", err
		}
		lr, ok := res.(*mcp.ListToolsResult)
		if !ok {
			return nil, "", nil
		}
		return lr.Tools, lr.NextCursor, nil
	}, 0)
	if err != nil {
		return "", err
	}
	for _, t := range tools {
		if t.Name == tool {
			return taskSupportOf(t), nil
		}
	}
	return "", nil
}

// start runs call as a new task of ss and returns the task created.
func (ts *TaskServer) start(ss *mcp.ServerSession, tp taskParams, call func(context.Context) (mcp.Result, error)) (mcp.Result, error) {
	s := ts.session(ss)
	if s.life.Err() != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the server is closing: no new tasks"}
	}
	id := newTaskID()
	ts.runs.Add(1)
	task := s.tasks.start(s.life, id, tp.TTL, func(tcx context.Context, update func(string, string)) (mcp.Result, error) {
		defer ts.runs.Done()
		tcx = context.WithValue(tcx, servedTaskKey{}, id)
		tcx = WithTaskCall(tcx, func(t Task) { update(t.Status, t.StatusMessage) })
		return call(tcx)
	})
	return &createTaskResult{Task: task}, nil
}

// servedTaskKey carries the ID of the task a served call runs as.
type servedTaskKey struct{}

// ServedTask returns the ID of the served task cx's call runs as ("" when it is not a
// task's): the server requests the call causes relate to that task (the
// io.modelcontextprotocol/related-task _meta), and a gateway tells its downstream client so.
func ServedTask(cx context.Context) string {
	if cx == nil {
		return ""
	}
	id, _ := cx.Value(servedTaskKey{}).(string)
	return id
}

// RelatedTaskMeta is the _meta key that relates a message to a task (the specification's).
const RelatedTaskMeta = metaRelatedTask

// MarkTaskSupport records on t, a tool a TaskServer's server lists, that it supports tasks
// (support is an execution.taskSupport: "optional" or "required"; others mark nothing).
func MarkTaskSupport(t *mcp.Tool, support string) {
	if support != "optional" && support != "required" {
		return
	}
	t.Meta = withMeta(t.Meta, metaExecution, map[string]any{"taskSupport": support})
}

// withTasksCapability is ir with the tasks a TaskServer serves in its capabilities.
func withTasksCapability(ir *mcp.InitializeResult) (mcp.Result, error) {
	v, err := resultMap(ir)
	if err != nil {
		return nil, err
	}
	caps, _ := v["capabilities"].(map[string]any)
	if caps == nil {
		caps = map[string]any{}
		v["capabilities"] = caps
	}
	caps["tasks"] = map[string]any{"list": map[string]any{}, "cancel": map[string]any{},
		"requests": map[string]any{"tools": map[string]any{"call": map[string]any{}}}}
	return &anyResult{v: v}, nil
}

// listedExecution is lr with each tool's execution where the tool carries one in _meta
// (metaExecution): taskSupport "optional" when the session has tasks, nothing otherwise;
// the _meta key goes either way.
func listedExecution(lr *mcp.ListToolsResult, tasks bool) (mcp.Result, error) {
	marked := false
	for _, t := range lr.Tools {
		if _, ok := t.Meta[metaExecution]; ok {
			marked = true
			break
		}
	}
	if !marked {
		return lr, nil
	}
	v, err := resultMap(lr)
	if err != nil {
		return nil, err
	}
	tools, _ := v["tools"].([]any)
	for _, t := range tools {
		tool, _ := t.(map[string]any)
		meta, _ := tool["_meta"].(map[string]any)
		ex, ok := meta[metaExecution].(map[string]any)
		if !ok {
			continue
		}
		delete(meta, metaExecution)
		if len(meta) == 0 {
			delete(tool, "_meta")
		}
		if ts, _ := ex["taskSupport"].(string); tasks && (ts == "optional" || ts == "required") {
			tool["execution"] = map[string]any{"taskSupport": "optional"}
		}
	}
	return &anyResult{v: v}, nil
}

// resultMap is r as a JSON object.
func resultMap(r mcp.Result) (map[string]any, error) {
	b, err := json.Marshal(r)
	if err != nil {
		return nil, err
	}
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, err
	}
	return v, nil
}

// ShimTaskRequest rewrites the body of a POST to a server a TaskServer serves over
// Streamable HTTP, before go-sdk's handler reads it: a tools/call's params.task, which the
// SDK's types drop, moves into _meta, where the TaskServer finds it. Any other body (or
// one too large to read whole) passes unchanged.
func ShimTaskRequest(req *http.Request) {
	if req.Method != http.MethodPost || req.Body == nil || req.Body == http.NoBody {
		return
	}
	b, err := io.ReadAll(io.LimitReader(req.Body, maxShimmedBody+1))
	if err != nil || len(b) > maxShimmedBody {
		req.Body = readCloser{io.MultiReader(bytes.NewReader(b), req.Body), req.Body}
		return
	}
	_ = req.Body.Close()
	out := shimCallRequest(b)
	req.Body = io.NopCloser(bytes.NewReader(out))
	req.ContentLength = int64(len(out))
}

// maxShimmedBody bounds a request body read whole to be rewritten.
const maxShimmedBody = 64 << 20

type readCloser struct {
	io.Reader
	io.Closer
}

// shimCallRequest moves a tools/call request's params.task into _meta (metaTask).
func shimCallRequest(b []byte) []byte {
	if !bytes.Contains(b, []byte(`"task"`)) || !bytes.Contains(b, []byte(`tools/call`)) {
		return b
	}
	msg, err := jsonrpc.DecodeMessage(b)
	if err != nil {
		return b
	}
	r, ok := msg.(*jsonrpc.Request)
	if !ok || r.Method != "tools/call" || !taskToMeta(r) {
		return b
	}
	out, err := jsonrpc.EncodeMessage(r)
	if err != nil {
		return b
	}
	return out
}
