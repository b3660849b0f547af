package ptc

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/plugins/toolregistry"
)

// ToolName is the name of the program tool the model calls in PTC mode; the tool registry
// reserves it ([toolregistry.ReservedRunCode]).
const ToolName = toolregistry.ReservedRunCode

// ToolDescription is the run_code tool's description for the model.
const ToolDescription = "Runs a TypeScript program that calls the tools declared in the system prompt " +
	"(await tools[\"name\"]({...})) and returns only what the program returns and logs. " +
	"The code is the body of an async function; return the value you need."

// ToolParameters is the run_code tool's input schema.
var ToolParameters = json.RawMessage(`{"type":"object","properties":{` +
	`"code":{"type":"string","description":"The TypeScript program: the body of an async function that may await and return."},` +
	`"description":{"type":"string","description":"A short label for people: what the program does."}},` +
	`"required":["code","description"],"additionalProperties":false}`)

// Args are run_code's arguments.
type Args struct {
	Code        string `json:"code"`
	Description string `json:"description"`
}

// Execute runs a run_code call: args are the model's arguments, callID the call's id. It
// returns the model-facing result (the return value and console output, or the error with
// the console output so far; an output-limit failure carries the captured output in a
// second text block, to be kept like any large result) and the run's outcome, nil when
// the arguments were invalid. Images returned by the nested calls are attached to the
// result as image blocks.
func (r *Runner) Execute(cx context.Context, c *ctx.Context, callID string, args json.RawMessage) (*toolregistry.Result, *Outcome) {
	var a Args
	if err := json.Unmarshal(args, &a); err != nil || strings.TrimSpace(a.Code) == "" {
		msg := "Error: run_code takes {\"code\": \"<TypeScript>\", \"description\": \"<label>\"}"
		if err != nil {
			msg += ": " + err.Error()
		} else {
			msg += ": code is empty"
		}
		return toolregistry.ErrorResult(msg), nil
	}
	out := r.Run(cx, c, Program{Code: a.Code, Description: a.Description, CallID: callID})
	return out.Result(), out
}

// Result renders the outcome for the model.
func (o *Outcome) Result() *toolregistry.Result {
	var b strings.Builder
	res := &toolregistry.Result{}
	if o.Err != nil {
		res.IsError = true
		b.WriteString("Error (" + string(o.Err.Kind) + "): " + o.Err.Error()[len(o.Err.Kind)+2:])
		b.WriteString("\n")
		if o.Err.Kind == KindOutputLimit {
			b.WriteString("The output captured up to the limit follows in the next block.")
			res.Content = []toolregistry.Content{toolregistry.Text(b.String()), toolregistry.Text(o.Captured)}
			return res
		}
		if o.Console != "" {
			b.WriteString("Console output before the error:\n" + o.Console)
		}
	} else {
		if o.Console != "" {
			b.WriteString("Console output:\n" + o.Console)
		}
		if o.Value == nil {
			b.WriteString("The program returned no value.")
		} else {
			if o.Console != "" {
				b.WriteString("Return value:\n")
			}
			b.Write(o.Value)
			res.Structured = o.Value
		}
	}
	res.Content = []toolregistry.Content{toolregistry.Text(strings.TrimRight(b.String(), "\n"))}
	for _, img := range o.Images {
		res.Content = append(res.Content, toolregistry.Image(img))
	}
	return res
}
