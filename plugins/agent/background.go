package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/cordisgo/harness/plugins/agent/agentapi"
	"github.com/cordisgo/harness/plugins/agent/session"
	"github.com/cordisgo/harness/plugins/toolregistry"
)

// taskResultTool is the name of the tool that waits for the result of a call's work kept
// in the background.
const taskResultTool = "task_result"

// bgTask is a call's work a session keeps in the background (a task of an MCP server).
// Its fields after b are guarded by the session's mu.
type bgTask struct {
	b       *toolregistry.Background
	tool    string // the tool's name as the model called it
	since   time.Time
	fetched bool // its result went into the conversation, or to a person
}

// keepInBackground returns the WithBackground function of a call: the call's work that
// goes on when the call stops waiting (its timeout passed, the turn was sent to the
// background) is kept by the root session, logged (task.background), and the model is told
// how to get its result.
func (s *Session) keepInBackground(st *callState) func(*toolregistry.Background) *toolregistry.Result {
	return func(b *toolregistry.Background) *toolregistry.Result {
		r := s.root()
		r.mu.Lock()
		if r.bg == nil {
			r.bg = map[string]*bgTask{}
		}
		r.bg[b.ID] = &bgTask{b: b, tool: st.target, since: time.Now()}
		r.mu.Unlock()
		s.emit(session.Event{Type: session.EventTaskBackground, Call: s.callInfo(st),
			Task: &session.TaskInfo{ID: b.ID, Server: b.Server, Tool: st.target}})
		return toolregistry.TextResult(fmt.Sprintf("The call goes on in the background as task %s of the MCP server %q: "+
			"the call stopped waiting for it. Call %s with {\"id\": %q} to wait for its result.", b.ID, b.Server, taskResultTool, b.ID))
	}
}

// ErrUnknownTask is matched by the error for a background task the session does not have.
var ErrUnknownTask = errors.New("agent: no such background task in this session")

// backgroundTask returns the session's background task id.
func (s *Session) backgroundTask(id string) (*bgTask, error) {
	r := s.root()
	r.mu.Lock()
	defer r.mu.Unlock()
	t := r.bg[id]
	if t == nil {
		known := make([]string, 0, len(r.bg))
		for k := range r.bg {
			known = append(known, k)
		}
		sort.Strings(known)
		return nil, fmt.Errorf("%w: %q (the session's: %v)", ErrUnknownTask, id, known)
	}
	return t, nil
}

// BackgroundTasks lists the session's calls whose work went on in the background, oldest
// first, each with its status now (asked of its server, within cx; a server that cannot
// say gives the error as the status message).
func (s *Session) BackgroundTasks(cx context.Context) []agentapi.BackgroundTask {
	r := s.root()
	r.mu.Lock()
	tasks := make([]*bgTask, 0, len(r.bg))
	for _, t := range r.bg {
		tasks = append(tasks, t)
	}
	r.mu.Unlock()
	sort.Slice(tasks, func(i, j int) bool { return tasks[i].since.Before(tasks[j].since) })
	out := make([]agentapi.BackgroundTask, 0, len(tasks))
	for _, t := range tasks {
		bt := agentapi.BackgroundTask{ID: t.b.ID, Server: t.b.Server, Tool: t.tool, CallID: t.b.CallID, Since: t.since}
		r.mu.Lock()
		bt.Fetched = t.fetched
		r.mu.Unlock()
		var err error
		if bt.Status, bt.Message, err = t.b.Status(cx); err != nil {
			bt.Status, bt.Message = "unknown", err.Error()
		}
		out = append(out, bt)
	}
	return out
}

// TaskResult waits (within cx) for the end of the session's background task id and returns
// its result as the model would get it. The server's questions meanwhile go to whoever
// answers the caller's (cx's) questions.
func (s *Session) TaskResult(cx context.Context, id string) (*toolregistry.Result, error) {
	t, err := s.backgroundTask(id)
	if err != nil {
		return nil, err
	}
	res, err := t.b.Result(cx)
	if err != nil {
		return nil, err
	}
	r := s.root()
	r.mu.Lock()
	t.fetched = true
	r.mu.Unlock()
	return res, nil
}

var taskResultSchema = json.RawMessage(`{"type":"object","properties":{` +
	`"id":{"type":"string","description":"The id of the background task, from the call's result that said it went to the background."}},` +
	`"required":["id"],"additionalProperties":false}`)

// taskResultTool is the tool that waits for a background task's result.
func (d *agentDef) taskResultTool() toolregistry.Tool {
	return toolregistry.Tool{
		Name: taskResultTool,
		Description: "Waits for a tool call that went on in the background (a task of its MCP server) to end, " +
			"and returns its result: give the task id the call's result named.",
		Parameters: taskResultSchema,
		Meta:       map[string]string{"harness": "agent", "readOnlyHint": "true"},
		// As long as an MCP call may take by default (maxToolCallMs); a wait cut short
		// leaves the task in the background, to be asked again.
		Timeout: 10 * time.Minute,
		Execute: func(cx context.Context, call *toolregistry.Call) (*toolregistry.Result, error) {
			var in struct {
				ID string `json:"id"`
			}
			if err := json.Unmarshal(call.Args, &in); err != nil {
				return nil, err
			}
			s, ok := call.Session.(*Session)
			if !ok {
				return nil, errors.New("no agent session: background tasks belong to a session")
			}
			return s.TaskResult(cx, in.ID)
		},
	}
}
