package yamlnode

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestValueHelpers(t *testing.T) {
	if n := Str("<<"); n.Style == 0 || Str("a").Style != 0 {
		t.Error(`"<<" is not quoted, or "a" is`)
	}
	if Printable("plain text") != "plain text" || Printable("bell\a") != `"bell\a"` || Printable("\xff") != `"\xff"` {
		t.Error("Printable")
	}
	if err := Safely(func() error { panic("boom") }); err == nil || !strings.Contains(err.Error(), "boom") {
		t.Errorf("Safely: %v", err)
	}
	got := Normalize(map[string]any{"a": map[any]any{1: []any{time.Date(2024, 1, 2, 0, 0, 0, 0, time.UTC)}}})
	want := map[string]any{"a": map[string]any{"1": []any{"2024-01-02"}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Normalize: %#v", got)
	}
}
