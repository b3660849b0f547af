package mcptest

import (
	"encoding/json"
	"reflect"
	"testing"
)

// SameJSON reports whether two JSON texts hold the same value, key order and white space
// aside (what a server sent against what a client or the gateway passed on). A text that is
// not JSON fails the test.
func SameJSON(t testing.TB, a, b []byte) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatalf("%v: %s", err, a)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	return reflect.DeepEqual(x, y)
}
