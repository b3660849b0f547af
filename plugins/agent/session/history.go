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
// calls left open before a later message get an aborted result.
func History(events []Event) (hist []model.Message, open []model.ToolCall) {
	var calls []model.ToolCall
	got := map[string]model.Message{}
	flush := func(final bool) {
		for _, tc := range calls {
			if m, ok := got[tc.ID]; ok {
				hist = append(hist, m)
				continue
			}
			if final {
				open = append(open, tc)
			}
			m, _ := Aborted(tc, "the session ended before this call finished")
			hist = append(hist, m)
		}
		calls = nil
		clear(got)
	}
	for i := range events {
		ev := &events[i]
		switch ev.Type {
		case EventUser:
			flush(false)
			hist = append(hist, model.Message{Role: model.RoleUser, Content: ev.Text})
		case EventAssistant:
			if ev.Message == nil {
				continue
			}
			flush(false)
			hist = append(hist, *ev.Message)
			calls = ev.Message.ToolCalls
		case EventToolResult:
			if ev.Message != nil && ev.Call != nil {
				got[ev.Call.ID] = *ev.Message
			}
		}
	}
	flush(true)
	return hist, open
}
