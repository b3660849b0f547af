package session

import (
	"github.com/cordisgo/harness/plugins/model"
)

// Aborted is the result of a call that never ran (the turn ended first, or the session
// ended before it finished): the tool message the model reads and its outcome.
func Aborted(tc model.ToolCall, why string) (model.Message, ResultInfo) {
	text := "Error: aborted: " + why + "."
	return model.Message{Role: model.RoleTool, ToolCallID: tc.ID, Content: text},
		ResultInfo{Outcome: "aborted", IsError: true, Bytes: len(text)}
}

// History returns the model history of a log's events, and the calls of the last
// assistant message that have no result. Results are put in the order of the calls;
// calls left open before a later message get an aborted result. Compactions are applied:
// the history is the compacted view the model saw last.
func History(events []Event) (hist []model.Message, open []model.ToolCall) {
	hist, _, open = View(events)
	return hist, open
}

// View is [History] with, for each message, the sequence number of the event it came from
// (a tool result's own event; an aborted result its call's assistant message; the summary
// of a compaction the compaction's event).
func View(events []Event) (hist []model.Message, seqs []int64, open []model.ToolCall) {
	var calls []model.ToolCall
	var callsSeq int64
	type result struct {
		msg model.Message
		seq int64
	}
	got := map[string]result{}
	flush := func(final bool) {
		for _, tc := range calls {
			if r, ok := got[tc.ID]; ok {
				hist, seqs = append(hist, r.msg), append(seqs, r.seq)
				continue
			}
			if final {
				open = append(open, tc)
			}
			m, _ := Aborted(tc, "the session ended before this call finished")
			hist, seqs = append(hist, m), append(seqs, callsSeq)
		}
		calls = nil
		clear(got)
	}
	for i := range events {
		ev := &events[i]
		switch ev.Type {
		case EventUser:
			flush(false)
			hist, seqs = append(hist, model.Message{Role: model.RoleUser, Content: ev.Text}), append(seqs, ev.Seq)
		case EventContext:
			if ev.Message != nil {
				flush(false)
				hist, seqs = append(hist, *ev.Message), append(seqs, ev.Seq)
			}
		case EventAssistant:
			if ev.Message == nil {
				continue
			}
			flush(false)
			hist, seqs = append(hist, *ev.Message), append(seqs, ev.Seq)
			calls, callsSeq = ev.Message.ToolCalls, ev.Seq
		case EventToolResult:
			if ev.Message != nil && ev.Call != nil {
				got[ev.Call.ID] = result{*ev.Message, ev.Seq}
			}
		case EventCompaction:
			if ev.Compaction == nil {
				continue
			}
			flush(false)
			hist, seqs = ev.Compaction.Apply(hist, seqs, ev.Seq)
		}
	}
	flush(true)
	return hist, seqs, open
}
