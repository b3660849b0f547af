package permission

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
)

func TestDecide(t *testing.T) {
	ro := map[string]string{"server": "gh", "mcpTool": "list_issues", "readOnlyHint": "true"}
	rw := map[string]string{"server": "gh", "mcpTool": "create_issue", "readOnlyHint": "false"}
	list := Tool{Name: "mcp__gh__list_issues", Meta: ro}
	create := Tool{Name: "mcp__gh__create_issue", Meta: rw}
	other := Tool{Name: "local_tool"}
	grants := map[string]bool{}
	decide := func(p Rules, ti Tool) Action {
		return p.Decide(ti, grants[ti.Name]).Action
	}
	if a := decide(Rules{Default: Ask}, list); a != Allow {
		t.Errorf("read-only: %s", a)
	}
	no := false
	if a := decide(Rules{Default: Ask, AllowReadOnly: &no}, list); a != Ask {
		t.Errorf("read-only without allowReadOnly: %s", a)
	}
	if a := decide(Rules{Default: Ask}, create); a != Ask {
		t.Errorf("default ask: %s", a)
	}
	if a := decide(Rules{Default: Deny}, other); a != Deny {
		t.Errorf("default deny: %s", a)
	}
	// Deny beats allow, whatever the order and the form of the rules.
	if a := decide(Rules{Default: Allow, Allow: []string{"mcp__gh__*"}, Deny: []string{"gh/create_*"}}, create); a != Deny {
		t.Errorf("deny by server rule: %s", a)
	}
	if a := decide(Rules{Default: Deny, Allow: []string{"gh/*"}}, create); a != Allow {
		t.Errorf("allow by server rule: %s", a)
	}
	if a := decide(Rules{Default: Allow, Ask: []string{"*"}}, other); a != Ask {
		t.Errorf("ask rule: %s", a)
	}
	if a := decide(Rules{Default: Deny, Deny: []string{"mcp__gh__list_*"}}, list); a != Deny {
		t.Errorf("deny beats read-only: %s", a)
	}
	grants["mcp__gh__create_issue"] = true
	if a := decide(Rules{Default: Ask, Ask: []string{"*"}}, create); a != Allow {
		t.Errorf("session grant: %s", a)
	}
	if a := decide(Rules{Default: Ask, Deny: []string{"*"}}, create); a != Deny {
		t.Errorf("deny beats a session grant: %s", a)
	}
}

// TestApprovals: a question waits for its answer, which is recorded with its real reason;
// "allow for this session" grants the tool; a non-interactive session refuses at once;
// Close ends a waiting question.
func TestApprovals(t *testing.T) {
	a := NewApprovals(true)
	var mu sync.Mutex
	var recorded []Request
	asked := make(chan Request, 1)
	record := func(q Request) {
		mu.Lock()
		recorded = append(recorded, q)
		mu.Unlock()
		if q.Decision == "" {
			asked <- q
		}
	}
	type result struct {
		ok  bool
		why string
		err error
	}
	ask := func(q Request) chan result {
		ch := make(chan result, 1)
		go func() {
			ok, why, err := a.Ask(context.Background(), q, record)
			ch <- result{ok, why, err}
		}()
		return ch
	}
	wait := func() Request {
		q := <-asked
		if p := a.Pending(); len(p) != 1 || p[0].ID != q.ID {
			t.Fatalf("pending %+v, want %s", p, q.ID)
		}
		return q
	}
	ch := ask(Request{Kind: "tool", Tool: "rm"})
	q := wait()
	if err := a.Answer(q.ID, Answer{Decision: "maybe"}); err == nil {
		t.Fatal("an unknown decision was accepted")
	}
	if err := a.Answer(q.ID, Answer{Decision: AllowSession}); err != nil {
		t.Fatal(err)
	}
	if r := <-ch; !r.ok || r.why != "" || r.err != nil {
		t.Fatalf("allowed: %+v", r)
	}
	if !a.Granted("rm") || a.Granted("mv") {
		t.Fatal("allow_session should grant rm only")
	}
	mu.Lock()
	if len(recorded) != 2 || recorded[0].Decision != "" || recorded[1].Decision != AllowSession || recorded[1].Why != "the user allowed the tool for the session" {
		t.Fatalf("recorded %+v", recorded)
	}
	mu.Unlock()
	ch = ask(Request{Kind: "tool", Tool: "mv"})
	q = wait()
	if err := a.Answer(q.ID, Answer{Decision: Deny}); err != nil {
		t.Fatal(err)
	}
	if r := <-ch; r.ok || r.why != "the user refused" {
		t.Fatalf("denied: %+v", r)
	}
	if err := a.Answer(q.ID, Answer{Decision: Allow}); !errors.Is(err, ErrUnknownApproval) {
		t.Fatalf("answered twice: %v", err)
	}
	ch = ask(Request{Kind: "tool", Tool: "cp"})
	wait()
	a.Close()
	if r := <-ch; r.ok || !errors.Is(r.err, ErrClosed) {
		t.Fatalf("closed: %+v", r)
	}
	if ok, why, _ := NewApprovals(false).Ask(context.Background(), Request{}, func(Request) {}); ok || !strings.Contains(why, "not interactive") {
		t.Fatalf("not interactive: %v %q", ok, why)
	}
}
