package session

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cordisgo/harness/plugins/model"
)

func TestDefaultDir(t *testing.T) {
	env := map[string]string{"XDG_STATE_HOME": "/state", "HOME": "/home/u"}
	get := func(k string) string { return env[k] }
	if d, err := DefaultDir(get); err != nil || d != filepath.Join("/state", "harness", "sessions") {
		t.Errorf("got %q, %v", d, err)
	}
	delete(env, "XDG_STATE_HOME")
	if d, err := DefaultDir(get); err != nil || d != filepath.Join("/home/u", ".local", "state", "harness", "sessions") {
		t.Errorf("got %q, %v", d, err)
	}
	delete(env, "HOME")
	if _, err := DefaultDir(get); err == nil {
		t.Error("no error without HOME")
	}
}

func TestStoreTornTail(t *testing.T) {
	st := OpenStore(t.TempDir())
	lf, err := st.Create("s1")
	if err != nil {
		t.Fatal(err)
	}
	reasoning := ""
	events := []Event{
		{Seq: 1, Type: EventSession, Header: &Header{ID: "s1", Created: time.Now()}},
		{Seq: 2, Type: EventUser, Text: "hello"},
		{Seq: 3, Type: EventAssistant, Message: &model.Message{Role: model.RoleAssistant, Reasoning: &reasoning,
			ToolCalls: []model.ToolCall{{ID: "c1", Name: "a", Arguments: "{}"}, {ID: "c2", Name: "b", Arguments: "{}"}}}},
		{Seq: 4, Type: EventToolResult, Call: &CallInfo{ID: "c2", Tool: "b"}, Message: &model.Message{Role: model.RoleTool, ToolCallID: "c2", Content: "two"}},
	}
	for i := range events {
		if err := lf.Write(&events[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := lf.Close(); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(st.SessionDir("s1"), logName)
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(`{"seq":5,"type":"tool.res`); err != nil { // the process died here
		t.Fatal(err)
	}
	_ = f.Close()
	got, size, err := st.ReadSize("s1")
	if err != nil || len(got) != 4 {
		t.Fatalf("read: %d events, %v", len(got), err)
	}
	hist, open := History(got)
	if len(open) != 1 || open[0].ID != "c1" {
		t.Fatalf("open calls: %+v", open)
	}
	// user, assistant, then the results in the calls' order: c1 (aborted), c2.
	if len(hist) != 4 || hist[2].ToolCallID != "c1" || !strings.Contains(hist[2].Content, "aborted") || hist[3].Content != "two" {
		t.Fatalf("history: %+v", hist)
	}
	if hist[1].Reasoning == nil || *hist[1].Reasoning != "" {
		t.Errorf("an empty reasoning must come back as empty, not absent: %+v", hist[1])
	}
	lf, err = st.Reopen("s1", size)
	if err != nil {
		t.Fatal(err)
	}
	if err := lf.Write(&Event{Seq: 5, Type: EventUser, Text: "again"}); err != nil {
		t.Fatal(err)
	}
	_ = lf.Close()
	got, err = st.Read("s1")
	if err != nil || len(got) != 5 || got[4].Text != "again" {
		t.Fatalf("after reopening: %d events, %v", len(got), err)
	}
	// A bad line that is not the last is an error naming the line.
	data, _ := os.ReadFile(p)
	_ = os.WriteFile(p, append([]byte(strings.Replace(string(data), `"hello"`, `hello`, 1)), '\n'), 0o600)
	if _, err := st.Read("s1"); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("corrupt line: %v", err)
	}
	if _, err := st.Read("../etc"); !errors.Is(err, ErrUnknownSession) {
		t.Errorf("path in id: %v", err)
	}
	list, err := st.List()
	if err != nil || len(list) != 1 || list[0].ID != "s1" || list[0].Err == "" {
		t.Errorf("list: %+v, %v", list, err)
	}
}

// TestResolvePrefix: the beginning of one stored id (the date and the time, as people copy
// them from sessions list) names it; an ambiguous or too short one stays as it is, so the
// caller says it is unknown, with the nearest ids.
func TestResolvePrefix(t *testing.T) {
	st := OpenStore(t.TempDir())
	for _, id := range []string{"20261205-043743-7e0dd7", "20261205-050102-aa0001", "20261205-050102-bb0002"} {
		lf, err := st.Create(id)
		if err != nil {
			t.Fatal(err)
		}
		if err := lf.Write(&Event{Seq: 1, Type: EventSession, Header: &Header{ID: id, Created: time.Now()}}); err != nil {
			t.Fatal(err)
		}
		_ = lf.Close()
	}
	for in, want := range map[string]string{
		"20261205-043743":        "20261205-043743-7e0dd7",
		"20261205-0437":          "20261205-043743-7e0dd7",
		"20261205-043743-7e0dd7": "20261205-043743-7e0dd7",
		"20261205-050102":        "20261205-050102", // two sessions that second
		"20261205":               "20261205",        // too short
		"20261205-043743-zz":     "20261205-043743-zz",
	} {
		if got, err := st.Resolve(in); err != nil || got != want {
			t.Errorf("Resolve(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := st.ReadID("20261205-043743"); err != nil {
		t.Errorf("ReadID of a prefix: %v", err)
	}
}
