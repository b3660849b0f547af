package toolregistry

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// Checking the arguments of a call against a schema of the fast checker's subset allocates
// nothing: the JSON text is checked as it is scanned.
func TestCheckArgsAllocations(t *testing.T) {
	e, err := compile(Tool{Name: "t", Execute: func(context.Context, *Call) (*Result, error) { return nil, nil },
		Parameters: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string","minLength":1},` +
			`"n":{"type":"integer","minimum":0},"tags":{"type":"array","items":{"enum":["a","b"]}}},"required":["text"],"additionalProperties":false}`)}, "")
	if err != nil {
		t.Fatal(err)
	}
	args := json.RawMessage(`{"text":"hello","n":3,"tags":["a","b"]}`)
	allocs := testing.AllocsPerRun(100, func() {
		if terr := checkArgs(e, "t", args); terr != nil {
			t.Fatal(terr)
		}
	})
	if allocs != 0 {
		t.Errorf("checkArgs allocated %v times per call, want 0", allocs)
	}
	if terr := checkArgs(e, "t", json.RawMessage(`{"text":""}`)); terr == nil || !strings.Contains(terr.Msg, `argument "text": must be at least 1 character long, got 0`) {
		t.Errorf("invalid arguments: %v", terr)
	}
}
