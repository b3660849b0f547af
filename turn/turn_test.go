package turn_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/cordisgo/harness/ctx/ctxtest"
	"github.com/cordisgo/harness/internal/modeltest"
	"github.com/cordisgo/harness/permission"
	"github.com/cordisgo/harness/plugins/agent/agentapi"
	"github.com/cordisgo/harness/plugins/agent/session"
	"github.com/cordisgo/harness/plugins/remote"
	"github.com/cordisgo/harness/testkit/agenttest"
	"github.com/cordisgo/harness/turn"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// newAgent returns a caller of a tree whose agent answers with replies.
func newAgent(t *testing.T, replies ...modeltest.Reply) remote.Caller {
	t.Helper()
	return remote.NewLocal(agenttest.New(t, replies...))
}

// A turn's events reach the caller in order, an approval is answered from them, and the
// next turn passes only its own events; Run returns the turn's end.
func TestRun(t *testing.T) {
	cl := newAgent(t,
		modeltest.Reply{Reasoning: "A note.", ToolCalls: []modeltest.ToolCall{{ID: "call_1", Name: "note", Arguments: `{"text":"milk"}`}}},
		modeltest.Reply{Content: "Noted: milk."},
		modeltest.Reply{Content: "Second."},
	)
	cx := ctxtest.Wait(t)
	s, err := turn.Start(cx, cl, agentapi.StartParams{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close(cx) }()
	var types []session.EventType
	end, err := s.Run(cx, "note milk", 0, func(ev session.Event) {
		types = append(types, ev.Type)
		if ev.Type == session.EventApprovalAsked {
			if err := s.Approve(cx, ev.Approval.ID, permission.Answer{Decision: permission.Allow}); err != nil {
				t.Errorf("approve: %v", err)
			}
		}
	})
	if err != nil || end == nil || end.Text != "Noted: milk." {
		t.Fatalf("first turn: %+v %v", end, err)
	}
	joined := func() string {
		var b []string
		for _, ty := range types {
			b = append(b, string(ty))
		}
		return strings.Join(b, " ")
	}
	if !strings.Contains(joined(), string(session.EventApprovalAsked)) || types[len(types)-1] != session.EventTurnEnd {
		t.Fatalf("events: %s", joined())
	}
	types = nil
	end, err = s.Run(cx, "again", 0, func(ev session.Event) {
		types = append(types, ev.Type)
		if ev.Type == session.EventApprovalAsked || ev.Type == session.EventToolResult {
			t.Errorf("an event of the first turn passed again: %+v", ev)
		}
	})
	if err != nil || end == nil || end.Text != "Second." {
		t.Fatalf("second turn: %+v %v", end, err)
	}
	if s.Info().Turns != 2 {
		t.Errorf("turns: %d", s.Info().Turns)
	}
}

// A turn whose context ends is cancelled on the host; a refused start is a *MethodError.
func TestCancelAndRefusal(t *testing.T) {
	cl := newAgent(t, modeltest.Reply{ToolCalls: []modeltest.ToolCall{{ID: "call_1", Name: "note", Arguments: `{}`}}})
	cx := ctxtest.Wait(t)
	if _, err := turn.Start(cx, cl, agentapi.StartParams{Agent: "nobody"}); err == nil {
		t.Fatal("an unknown agent started")
	} else if me, ok := errors.AsType[*turn.MethodError](err); !ok || me.Method != "agent/start" {
		t.Fatalf("refusal: %T %v", err, err)
	}
	s, err := turn.Start(cx, cl, agentapi.StartParams{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close(cx) }()
	rcx, cancel := context.WithCancel(cx)
	end, err := s.Run(rcx, "note", 0, func(ev session.Event) {
		if ev.Type == session.EventApprovalAsked {
			cancel() // nobody answers: the person interrupts
		}
	})
	if end != nil || !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted turn: %+v %v", end, err)
	}
}

// Outcome is nil for an answered turn, an *IncompleteError naming the reason for one that
// stopped before the model finished, and the turn's own error otherwise.
func TestOutcome(t *testing.T) {
	failed := errors.New("the model's API failed")
	for _, c := range []struct {
		end        *session.TurnEnd
		err        error
		want       error
		incomplete session.StopReason
	}{
		{end: &session.TurnEnd{Reason: session.StopDone}},
		{end: &session.TurnEnd{Reason: session.StopMaxSteps}, incomplete: session.StopMaxSteps},
		{end: &session.TurnEnd{Reason: session.StopTokenBudget}, incomplete: session.StopTokenBudget},
		{end: &session.TurnEnd{Reason: session.StopLength}, incomplete: session.StopLength},
		{end: &session.TurnEnd{Reason: session.StopIncomplete}, incomplete: session.StopIncomplete},
		{end: &session.TurnEnd{Reason: session.StopCancelled}, err: agentapi.ErrCancelled, want: agentapi.ErrCancelled},
		{end: &session.TurnEnd{Reason: session.StopError}, err: failed, want: failed},
		{err: turn.ErrEnded, want: turn.ErrEnded},
	} {
		err := turn.Outcome(c.end, c.err)
		ie, ok := errors.AsType[*turn.IncompleteError](err)
		switch {
		case c.incomplete != "" && (!ok || ie.Reason != c.incomplete):
			t.Errorf("Outcome(%+v, %v) = %v, want an IncompleteError for %s", c.end, c.err, err, c.incomplete)
		case c.incomplete == "" && !errors.Is(err, c.want):
			t.Errorf("Outcome(%+v, %v) = %v, want %v", c.end, c.err, err, c.want)
		}
	}
}
