package hostview

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/cordisgo/harness/internal/termsafe"
	"github.com/cordisgo/harness/internal/words"
	"github.com/cordisgo/harness/plugins/agent/session"
	"github.com/cordisgo/harness/plugins/model"
	"github.com/cordisgo/harness/termui"
)

// Transcript prints a session's events as a conversation.
func Transcript(w io.Writer, events []session.Event) error {
	var b strings.Builder
	for _, ev := range events {
		who := ""
		if ev.Agent != "" {
			who = "[" + ev.Agent + "] "
		}
		switch ev.Type {
		case session.EventSession:
			h := ev.Header
			name := h.Agent
			if name == "" {
				name = "main"
			}
			if h.Resumed == 0 {
				fmt.Fprintf(&b, "session %s · agent %s · model %s (%s) · %s\n", h.ID, name, h.Model, h.ModelID, h.Created.Local().Format(time.DateTime))
				if h.Parent != "" {
					fmt.Fprintf(&b, "subagent run of session %s\n", h.Parent)
				}
			} else {
				fmt.Fprintf(&b, "\n(resumed, model %s)\n", h.Model)
			}
		case session.EventUser:
			fmt.Fprintf(&b, "\n> %s\n", strings.ReplaceAll(termsafe.String(ev.Text), "\n", "\n> "))
		case session.EventAssistant:
			if ev.Message != nil && strings.TrimSpace(ev.Message.Content) != "" {
				fmt.Fprintf(&b, "\n%s%s\n", who, termsafe.String(strings.TrimSpace(ev.Message.Content)))
			}
		case session.EventToolResult:
			if ev.Call != nil && ev.Result != nil {
				args := ev.Call.Args
				if len(args) > 120 {
					args = args[:117] + "..."
				}
				line := fmt.Sprintf("  %s· %s %s → %s (%d ms)", who, ev.Call.Tool, args, ev.Result.Outcome, ev.Result.Duration)
				fmt.Fprintln(&b, termsafe.String(line))
			}
		case session.EventApprovalDecided:
			if ev.Approval != nil {
				fmt.Fprintln(&b, termsafe.String(fmt.Sprintf("  %s? %s %s: %s %s", who, ev.Approval.Kind, ev.Approval.Tool+ev.Approval.Server, ev.Approval.Decision, ev.Approval.Why)))
			}
		case session.EventError:
			fmt.Fprintln(&b, termsafe.String("  "+who+"error: "+ev.Error))
		case session.EventTurnEnd:
			if ev.End != nil {
				u := ev.End.Usage
				fmt.Fprintf(&b, "  (%s%s after %d step%s; %d prompt tokens, %d cached; %d completion tokens)\n", who,
					ev.End.Reason, ev.End.Steps, words.Plural(ev.End.Steps), u.PromptTokens, u.CacheHitTokens, u.CompletionTokens)
			}
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Sessions prints stored sessions as a table: id, last update, agent (a subagent's marked),
// model, turns and title (or why the log could not be read).
func Sessions(w io.Writer, infos []session.Info) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tUPDATED\tAGENT\tMODEL\tTURNS\tTOKENS\tCOST\tTITLE")
	for _, in := range infos {
		title := in.Title
		if in.Err != "" {
			title = "(unreadable: " + in.Err + ")"
		}
		name := in.Agent
		if name == "" {
			name = "main"
		}
		if in.Parent != "" {
			name += " (sub)"
		}
		u := in.Usage
		cost := "-" // no price known
		if u.Cost > 0 {
			cost = model.FormatCost(u.Cost)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d\t%s\t%s\n", in.ID, in.Updated.Local().Format(time.DateTime), name,
			in.Model, in.Turns, u.PromptTokens+u.CompletionTokens, cost, termsafe.String(title))
	}
	return tw.Flush()
}

// ToolLine writes the line of a tool call's result in a turn followed as it runs (harness
// ask on a terminal): "[AGENT: ]TOOL OUTCOME (N ms)"; other events write nothing.
func ToolLine(w io.Writer, ev session.Event) {
	if ev.Type != session.EventToolResult || ev.Call == nil || ev.Result == nil {
		return
	}
	who := ""
	if ev.Agent != "" {
		who = ev.Agent + ": "
	}
	fmt.Fprintf(w, "%s%s %s (%d ms)\n", who, termsafe.String(ev.Call.Tool), ev.Result.Outcome, ev.Result.Duration)
}

// Answer writes a turn's answer, the model's text, on w with one final newline: shown safe
// on a terminal, as it is when redirected (the answer is the command's output). An empty
// answer writes nothing.
func Answer(w io.Writer, text string) {
	if text == "" {
		return
	}
	if termui.IsTerminal(w) {
		text = termsafe.String(text)
	}
	fmt.Fprintln(w, strings.TrimRight(text, "\n"))
}
