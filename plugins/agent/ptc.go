package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/cordisgo/harness/plugins/agent/session"
	"github.com/cordisgo/harness/plugins/model"
	"github.com/cordisgo/harness/plugins/ptc"
	"github.com/cordisgo/harness/plugins/toolregistry"
)

// The modes of an agent ([Config].Mode) and of a session ([StartOptions].Mode).
const (
	// ModeStandard: the model calls the visible tools one by one.
	ModeStandard = ptc.ModeStandard
	// ModePTC: the model sees one tool, run_code, and the tools' TypeScript declarations in
	// the system prompt, and calls the tools from programs (package ptc).
	ModePTC = ptc.ModePTC
	// ModeBoth (an agent's mode only): both are offered; sessions are in standard mode
	// unless started in ptc mode.
	ModeBoth = "both"
)

// ptcVars are the prompt variables of a PTC-mode assembly: they turn the declarations
// section on.
var ptcVars = map[string]string{ptc.ModeVar: ptc.ModePTC}

// ptcToolDefs is the one function definition of a PTC-mode request.
var ptcToolDefs = []model.ToolDef{{Name: ptc.ToolName, Description: ptc.ToolDescription, Parameters: ptc.ToolParameters}}

// sessionMode resolves a session's mode: true for PTC. "" is the agent's default.
func (d *agentDef) sessionMode(mode string) (bool, error) {
	offered := d.cfg.Mode
	if offered == "" {
		offered = ModeBoth
	}
	switch mode {
	case "":
		return offered == ModePTC, nil
	case ModeStandard, ModePTC:
		if offered != ModeBoth && offered != mode {
			return false, fmt.Errorf("agent %q offers %s mode only, not %s (set its mode to %q or %q)", d.displayName(), offered, mode, mode, ModeBoth)
		}
		return mode == ModePTC, nil
	}
	return false, fmt.Errorf("unknown mode %q: expected %q or %q", mode, ModeStandard, ModePTC)
}

// displayName names the agent in messages.
func (d *agentDef) displayName() string {
	if d.name == "" {
		return "main"
	}
	return d.name
}

// runCode runs one call of a PTC-mode answer: run_code runs the program through the ptc
// service (its calls go through the registry from the agent's scope for this session —
// the agent's permissions and approvals decide them — with the agent's overlap rule);
// any other name is refused before it reaches the registry, pointing to run_code. The
// program's nested calls are logged as EventCodeCall.
func (s *Session) runCode(cx context.Context, d *agentDef, info model.Info, tc model.ToolCall, args json.RawMessage) (model.Message, session.ResultInfo) {
	if tc.Name != ptc.ToolName {
		err := &toolregistry.ToolError{Code: toolregistry.CodeUnknownTool, Tool: tc.Name,
			Msg: "unknown tool " + strconv.Quote(tc.Name) + ": in this session tools are called from a program: use run_code ({\"code\": ..., \"description\": ...}) and call tools[" + strconv.Quote(tc.Name) + "](...) in it"}
		return s.toolMessage(d, info, tc.ID, nil, err)
	}
	runner, ok := ptc.Key.Get(d.c)
	if !ok || runner == nil {
		err := &toolregistry.ToolError{Code: toolregistry.CodeUnknownTool, Tool: tc.Name,
			Msg: "run_code is not available: PTC mode needs the ptc plugin mounted in the profile (use: ptc)"}
		return s.toolMessage(d, info, tc.ID, nil, err)
	}
	res, out := runner.With(d.parallelSafe).For(toolregistry.ExecOptions{Session: s, Approver: s.approver}).Execute(cx, d.c, tc.ID, args)
	var err error
	if out != nil {
		for _, c := range out.Calls {
			s.emit(session.Event{Type: session.EventCodeCall, Call: &session.CallInfo{ID: c.ID, Tool: c.Tool, Args: maskArgs(string(c.Args))},
				Result: &session.ResultInfo{Outcome: string(c.Outcome), IsError: c.Outcome != toolregistry.CodeOK, Duration: c.Duration.Milliseconds()}})
		}
		if out.Err != nil {
			err = out.Err
		}
	}
	msg, ri := s.toolMessage(d, info, tc.ID, res, err)
	if out != nil && out.Err != nil {
		ri.Outcome = string(out.Err.Kind)
	}
	return msg, ri
}
