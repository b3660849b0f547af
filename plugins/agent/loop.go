package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/elicitation"
	"github.com/cordisgo/harness/permission"
	"github.com/cordisgo/harness/plugins/agent/session"
	"github.com/cordisgo/harness/plugins/model"
	"github.com/cordisgo/harness/plugins/sysprompt"
	"github.com/cordisgo/harness/plugins/toolregistry"
	"github.com/cordisgo/harness/plugins/toolregistry/deferral"
	"github.com/cordisgo/harness/sampling"
)

// ToolsRequest is what the [Tools] chain decides on: which function definitions one model
// request carries.
//
// A ToolsRequest is owned by the dispatch; listeners must not keep it.
type ToolsRequest struct {
	// Caller is the agent's context: the scope whose tools are visible.
	Caller *ctx.Context
	// Session is the session the request is for.
	Session *Session
	// Model describes the model the request goes to.
	Model model.Info
	// Visible are the tools visible from the agent's scope, sorted by name (the
	// registry's listing; shared, not to be modified).
	Visible []toolregistry.Info
}

// Tools is the one point where the tool definitions of a model request are chosen: a
// waterfall dispatched from the agent's context before every request. The default at the
// end of the chain is [ToolDefs] of the visible tools; a listener (deferred tools, code
// mode) may replace the list. Keep the answer byte-identical from request to request
// while nothing changed: the tool definitions are part of the prompt prefix the provider
// caches.
var Tools = ctx.NewChain[*ToolsRequest, []model.ToolDef]("agent/tools")

// ToolDefs turns registry listings into function definitions, in the listing's order
// (sorted by name), each schema's bytes as registered.
func ToolDefs(tools []toolregistry.Info) []model.ToolDef {
	out := make([]model.ToolDef, len(tools))
	for i, t := range tools {
		out[i] = model.ToolDef{Name: t.Name, Description: t.Description, Parameters: t.Parameters}
	}
	return out
}

// def returns the session's agent as mounted now.
func (s *Session) def() (*agentDef, error) {
	if s.svc == nil {
		return nil, ErrClosed
	}
	return s.svc.agent(s.agent)
}

// runTurn is one turn of the loop.
func (s *Session) runTurn(cx context.Context, text string) (*session.TurnEnd, error) {
	end := &session.TurnEnd{}
	finish := func(reason session.StopReason, err error) (*session.TurnEnd, error) {
		end.Reason = reason
		if err != nil {
			s.emit(session.Event{Type: session.EventError, Error: err.Error()})
		}
		e := *end
		s.emit(session.Event{Type: session.EventTurnEnd, End: &e})
		return end, err
	}
	d, err := s.def()
	if err != nil {
		return finish(session.StopError, err)
	}
	m, err := d.models.Get(s.modelName)
	if err != nil {
		return finish(session.StopError, err)
	}
	info := m.Info()
	// The turn also ends when the agent's scope unloads.
	stop := context.AfterFunc(d.c, func() {
		s.Cancel()
	})
	defer stop()

	if msg := s.instructionUpdates(d); msg != nil {
		ce := s.emit(session.Event{Type: session.EventContext, Message: msg})
		s.appendHistory(ce.Seq, *msg)
	}
	ue := s.emit(session.Event{Type: session.EventUser, Text: text})
	s.appendHistory(ue.Seq, model.Message{Role: model.RoleUser, Content: text})

	// The calls' context carries the session for what a tool call causes beyond the
	// registry (an MCP server's sampling request, tool_search); the registry's policy and
	// approver get it in the call's options.
	callCx := sampling.WithSampler(context.WithValue(cx, sessKey{}, s), s.sampler)
	var partial, partialReasoning strings.Builder
	calling := false // a tool call of the answer in flight was streamed
	onDelta := func(dl model.Delta) {
		switch dl.Kind {
		case model.DeltaReasoning:
			partialReasoning.WriteString(dl.Text)
			s.emit(session.Event{Type: session.EventReasoningDelta, Text: dl.Text})
		case model.DeltaContent:
			partial.WriteString(dl.Text)
			s.emit(session.Event{Type: session.EventTextDelta, Text: dl.Text})
		case model.DeltaToolCall:
			calling = true
		case model.DeltaRetry:
			partial.Reset()
			partialReasoning.Reset()
			calling = false
			msg := "retrying"
			if dl.Err != nil {
				msg = dl.Err.Error()
			}
			s.emit(session.Event{Type: session.EventRetry, Error: msg})
		}
	}
	for step := 1; ; step++ {
		if step > d.cfg.MaxSteps {
			return finish(session.StopMaxSteps, nil)
		}
		s.mu.Lock()
		s.step = step
		s.mu.Unlock()
		end.Steps = step
		req, bytes, err := s.fitRequest(cx, d, m, info)
		if err != nil {
			return finish(session.StopError, err)
		}
		partial.Reset()
		partialReasoning.Reset()
		calling = false
		resp, err := m.Generate(cx, req, onDelta)
		for overflows := 0; errors.Is(err, model.ErrContextTooLong) && overflows < 2 && cx.Err() == nil; overflows++ {
			// The provider counts otherwise than the estimate: compact and send again,
			// within the turn.
			if _, cerr := s.compact(cx, d, m, info, CompactOverflow, ""); cerr != nil {
				err = fmt.Errorf("%w (compacting did not help: %w)", err, cerr)
				break
			}
			if req, bytes, err = s.fitRequest(cx, d, m, info); err != nil {
				return finish(session.StopError, err)
			}
			resp, err = m.Generate(cx, req, onDelta)
		}
		if err != nil {
			// What the person saw of a cancelled or cut answer stays in the conversation
			// (a tool call cut short cannot: it is dropped).
			keep := func() {
				if partial.Len() == 0 {
					return
				}
				msg := model.Message{Role: model.RoleAssistant, Content: partial.String()}
				if info.Thinking { // sent back as received: DeepSeek's rule for reasoning
					r := partialReasoning.String()
					msg.Reasoning = &r
				}
				s.emitAssistant(msg)
				end.Text = msg.Content
			}
			switch {
			case cx.Err() != nil:
				keep()
				return finish(session.StopCancelled, nil)
			case errors.Is(err, model.ErrStreamCut) && (partial.Len() > 0 || calling):
				keep()
				return finish(session.StopIncomplete, err)
			}
			return finish(session.StopError, err) // a model's errors name it (model.Model)
		}
		msg := resp.Message
		msg.Role = model.RoleAssistant
		s.emitAssistant(msg)
		u := priced(info, resp.Usage)
		s.mu.Lock()
		s.est.reported(bytes, u.PromptTokens)
		s.mu.Unlock()
		s.emit(session.Event{Type: session.EventUsage, Usage: &u})
		addUsage(&end.Usage, u)
		if msg.Content != "" {
			end.Text = msg.Content
		}
		if len(msg.ToolCalls) == 0 {
			if resp.FinishReason == model.FinishLength {
				return finish(session.StopLength, fmt.Errorf("the answer was cut at the model's output limit (finish_reason length)"))
			}
			return finish(session.StopDone, nil)
		}
		s.runCalls(callCx, d, info, msg.ToolCalls)
		addUsage(&end.Usage, s.takeSubagentUsage())
		if cx.Err() != nil {
			return finish(session.StopCancelled, nil)
		}
		if b := d.cfg.TokenBudget; b > 0 && end.Usage.PromptTokens+end.Usage.CompletionTokens >= b {
			return finish(session.StopTokenBudget, nil)
		}
	}
}

// priced returns u with its cost at the model's price (none when the price is not known).
func priced(info model.Info, u model.Usage) model.Usage {
	if info.Price != nil {
		u.Cost = info.Price.Cost(u)
	}
	return u
}

func addUsage(t *model.Usage, u model.Usage) {
	t.PromptTokens += u.PromptTokens
	t.CompletionTokens += u.CompletionTokens
	t.CacheHitTokens += u.CacheHitTokens
	t.CacheMissTokens += u.CacheMissTokens
	t.ReasoningTokens += u.ReasoningTokens
	t.Cost += u.Cost
}

// emitAssistant logs the model's message exactly as the model sent it — a resumed
// session replays what the model saw and said byte for byte; surfaces show a call's
// arguments from tool.start and tool.result, masked — and appends it to the history.
func (s *Session) emitAssistant(msg model.Message) {
	ev := s.emit(session.Event{Type: session.EventAssistant, Message: &msg})
	s.appendHistory(ev.Seq, msg)
}

// appendHistory appends msg, which came from the event numbered seq, to the history.
func (s *Session) appendHistory(seq int64, msg model.Message) {
	s.mu.Lock()
	s.history = append(s.history, msg)
	s.seqs = append(s.seqs, seq)
	s.est.add(msg)
	s.mu.Unlock()
}

// fitRequest assembles the next model request and, when its estimated tokens pass the
// agent's compaction threshold, compacts the history first (a failed compaction is
// reported and the request sent as it is: the provider may still take it). It returns
// the request and its estimated bytes.
func (s *Session) fitRequest(cx context.Context, d *agentDef, m model.Model, info model.Info) (*model.Request, int, error) {
	req, err := s.request(d, info)
	if err != nil {
		return nil, 0, err
	}
	s.mu.Lock()
	bytes := s.est.requestBytes(req)
	over := d.compactLimit(info)
	tokens := s.est.tokens(bytes)
	s.mu.Unlock()
	if over == 0 || tokens <= over {
		return req, bytes, nil
	}
	if _, err := s.compact(cx, d, m, info, CompactAuto, ""); err != nil {
		if !errors.Is(err, ErrNothingToCompact) && cx.Err() == nil {
			s.emit(session.Event{Type: session.EventError, Error: err.Error()})
		}
		return req, bytes, nil
	}
	if req, err = s.request(d, info); err != nil {
		return nil, 0, err
	}
	s.mu.Lock()
	bytes = s.est.requestBytes(req)
	s.mu.Unlock()
	return req, bytes, nil
}

// request assembles one model request: the system prompt and the tools at the agent's
// scope, and the history.
func (s *Session) request(d *agentDef, info model.Info) (*model.Request, error) {
	var system string
	var vars map[string]string
	if s.ptc {
		vars = ptcVars
	}
	if ps, ok := sysprompt.Key.Get(d.c); ok {
		p, err := ps.Assemble(d.c, vars)
		if err != nil {
			return nil, fmt.Errorf("system prompt: %w", err)
		}
		system = p.Text
	}
	if s.ptc {
		s.mu.Lock()
		hist := s.history[:len(s.history):len(s.history)]
		s.mu.Unlock()
		return &model.Request{System: system, Messages: hist, Tools: ptcToolDefs}, nil
	}
	tr := &ToolsRequest{Caller: d.c, Session: s, Model: info, Visible: modelTools(d.tools.List(d.c))}
	defs, err := Tools.Waterfall(d.c, tr, func() ([]model.ToolDef, error) {
		return ToolDefs(d.deferrer.Choose(s, tr.Visible, info.ContextWindow)), nil // deferTools
	})
	if err != nil {
		return nil, fmt.Errorf("choosing the tools: %w", err)
	}
	s.mu.Lock()
	hist := s.history[:len(s.history):len(s.history)]
	s.mu.Unlock()
	return &model.Request{System: system, Messages: hist, Tools: defs}, nil
}

// callState is one tool call of a step.
type callState struct {
	tc      model.ToolCall
	args    json.RawMessage
	badJSON error
	// target is the tool called: tc's, or the one a call_tool call names (args are then
	// that tool's); badCall is why a call_tool call names none.
	target  string
	badCall error
	info    toolregistry.Info
	safe    bool
	msg     model.Message
	res     session.ResultInfo
}

// runCalls executes the calls of one step under the registry's batch rule
// ([toolregistry.RunBatch]): calls whose tools are safe to run alongside others overlap,
// up to maxParallel; any other call waits for those before it and runs alone. Results are
// recorded and appended in the model's order. When cx ends, running calls report their
// outcome and calls not started get an aborted result.
func (s *Session) runCalls(cx context.Context, d *agentDef, info model.Info, calls []model.ToolCall) {
	states := make([]*callState, len(calls))
	for i, tc := range calls {
		st := &callState{tc: tc}
		if a := strings.TrimSpace(tc.Arguments); a != "" {
			if json.Valid([]byte(a)) {
				st.args = json.RawMessage(a)
			} else {
				var v any
				st.badJSON = json.Unmarshal([]byte(a), &v)
				if st.badJSON == nil {
					st.badJSON = errors.New("invalid JSON")
				}
			}
		}
		st.target = tc.Name
		if tc.Name == deferral.CallToolName && !s.ptc && st.badJSON == nil {
			// A call through call_tool is the call of the tool it names: its permissions,
			// approvals, overlap and log entry are that tool's.
			name, args, err := deferral.ParseCall(st.args)
			if err != nil {
				st.badCall = err
			} else {
				st.target, st.args = name, args
			}
		}
		st.info, _ = d.tools.Lookup(d.c, st.target)
		st.safe = st.badJSON == nil && !s.ptc && d.parallelSafe(st.info)
		states[i] = st
	}
	opts := toolregistry.ExecOptions{Session: s, Approver: s.approver}
	toolregistry.RunBatch(cx, toolregistry.Batch{
		N: len(states), Max: d.cfg.MaxParallel,
		// A call whose arguments are not JSON runs nothing: it holds back no other call.
		Safe: func(i int) bool { return states[i].safe || states[i].badJSON != nil },
		Start: func(i int) {
			if st := states[i]; st.badJSON == nil {
				s.emit(session.Event{Type: session.EventToolStart, Call: s.callInfo(st)})
			}
		},
		Run: func(cx context.Context, i int) {
			st := states[i]
			started := time.Now()
			switch {
			case st.badJSON != nil:
				st.msg, st.res = invalidJSONResult(st.tc, st.badJSON)
				return
			case permission.AppOnly(st.info.Meta):
				st.msg, st.res = appOnlyResult(st.tc)
				return
			case st.badCall != nil:
				text := "Error: " + st.badCall.Error()
				st.msg = model.Message{Role: model.RoleTool, ToolCallID: st.tc.ID, Content: text}
				st.res = session.ResultInfo{Outcome: string(toolregistry.CodeInvalidArgs), IsError: true, Bytes: len(text)}
				return
			case s.ptc:
				st.msg, st.res = s.runCode(cx, d, info, st.tc, st.args)
			default:
				o := opts
				o.CallID = st.tc.ID
				// A question its server asks shows next to the call (the root session's,
				// where a subagent's calls are followed too).
				ocx := elicitation.WithOrigin(cx, elicitation.Origin{Session: s.root().ID(), Call: st.tc.ID})
				ocx = toolregistry.WithProgress(ocx, s.followProgress(st))
				ocx = toolregistry.WithBackground(ocx, s.keepInBackground(st))
				res, err := d.tools.Execute(ocx, d.c, st.target, st.args, o)
				st.msg, st.res = s.toolMessage(d, info, st.tc.ID, res, err)
				st.res.View = viewResult(st.info, res)
			}
			st.res.Duration = time.Since(started).Milliseconds()
		},
		Abort: func(i int) {
			states[i].msg, states[i].res = session.Aborted(states[i].tc, "the turn was cancelled before this call started")
		},
		Done: func(i int) {
			st := states[i]
			msg, res := st.msg, st.res
			ev := s.emit(session.Event{Type: session.EventToolResult, Call: s.callInfo(st), Result: &res, Message: &msg})
			s.appendHistory(ev.Seq, msg)
		},
	})
}

// followProgress returns the progress function of a call (toolregistry.WithProgress):
// each message the tool reports that differs from its last (a server's progress message, a
// task's status) becomes an EventToolProgress.
func (s *Session) followProgress(st *callState) func(toolregistry.Progress) {
	var mu sync.Mutex
	last := ""
	call := &session.CallInfo{ID: st.tc.ID, Tool: st.target}
	return func(p toolregistry.Progress) {
		mu.Lock()
		fresh := p.Message != "" && p.Message != last
		if fresh {
			last = p.Message
		}
		mu.Unlock()
		if fresh {
			s.emit(session.Event{Type: session.EventToolProgress, Call: call,
				Progress: &session.ProgressInfo{Progress: p.Progress, Total: p.Total, Message: p.Message}})
		}
	}
}

func (s *Session) callInfo(st *callState) *session.CallInfo {
	args := st.tc.Arguments
	if st.target != st.tc.Name { // through call_tool: the arguments of the tool called
		args = string(st.args)
	}
	return &session.CallInfo{ID: st.tc.ID, Tool: st.target, Args: maskArgs(args), Parallel: st.safe}
}

// invalidJSONResult is the result of a call whose arguments are not JSON.
func invalidJSONResult(tc model.ToolCall, err error) (model.Message, session.ResultInfo) {
	text := fmt.Sprintf("Error: the arguments of %s are not valid JSON (%v); call it again with a JSON object.", tc.Name, err)
	return model.Message{Role: model.RoleTool, ToolCallID: tc.ID, Content: text},
		session.ResultInfo{Outcome: "invalid_json", IsError: true, Bytes: len(text)}
}
