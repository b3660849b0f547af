package jsoncheck

import (
	"encoding/json"
	"reflect"
	"testing"
)

var decodeSeeds = []string{
	`{}`, ` { } `, `{"q":"tool registry","limit":10}`, `{"a":[1,2.5,-0,1e3,-1.5E-2,true,false,null,[],{}]}`,
	`{"a":1,"a":2}`, `{"s":"\u00e9\n\"\\\/"}`, `{"s":"é"}`, "{\"s\":\"\xff\"}", "{\"s\":\"\\\"\xff\"}",
	`{"n":1e400}`, `{"n":01}`, `{"n":-}`, `{"n":1.}`, `{"n":.5}`, `{"n":1e}`, `[1]`, `"x"`, `12`, `null`,
	`{"a":1,}`, `{"a" 1}`, `{"a":tru}`, `{"a":truex}`, `{} x`, `{"s":"a` + "\x01" + `"}`, `{"s":"\x"}`,
	`{"s":"\ud800"}`, `{"k\"ey":"v"}`, `{"a":[1 2]}`, `{"a":{"b":{"c":[[[]]]}}}`, ``, ` `, `{`, `{"a":`,
}

// FuzzDecodeJSON checks that decodeJSON yields exactly what json.Unmarshal into an any
// yields, whenever it does not decline.
func FuzzDecodeJSON(f *testing.F) {
	for _, s := range decodeSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		checkDecode(t, raw)
	})
}

func TestDecodeJSON(t *testing.T) {
	for _, s := range decodeSeeds {
		checkDecode(t, []byte(s))
	}
	deep := make([]byte, 0, 2*maxDecodeDepth+10)
	for range maxDecodeDepth + 1 {
		deep = append(deep, '[')
	}
	for range maxDecodeDepth + 1 {
		deep = append(deep, ']')
	}
	if _, ok := decodeJSON(deep); ok {
		t.Errorf("decodeJSON accepted nesting deeper than %d", maxDecodeDepth)
	}
	checkDecode(t, deep)
	if _, ok := decodeJSON([]byte(`{"q":"x","limit":10}`)); !ok {
		t.Error("decodeJSON declined plain arguments")
	}
}

func checkDecode(t *testing.T, raw []byte) {
	t.Helper()
	got, ok := decodeJSON(raw)
	var want any
	err := json.Unmarshal(raw, &want)
	if !ok {
		return // declined: the caller falls back to encoding/json
	}
	if err != nil {
		t.Fatalf("decodeJSON(%q) = %#v, but json.Unmarshal fails: %v", raw, got, err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("decodeJSON(%q) = %#v, json.Unmarshal = %#v", raw, got, want)
	}
}
