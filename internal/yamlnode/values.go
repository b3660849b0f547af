package yamlnode

import (
	"fmt"
	"strconv"
	"time"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// Str is a string scalar node; "<<" is quoted so that it stays a key rather than becoming
// a merge.
func Str(s string) *yaml.Node {
	n := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s}
	if s == "<<" {
		n.Style = yaml.DoubleQuotedStyle
	}
	return n
}

// Printable returns s for a YAML comment: as it is, or quoted when it holds characters a
// comment cannot show.
func Printable(s string) string {
	if !utf8.ValidString(s) {
		return strconv.Quote(s)
	}
	for _, r := range s {
		if !strconv.IsPrint(r) {
			return strconv.Quote(s)
		}
	}
	return s
}

// Safely runs a YAML (or TOML) library call, turning a panic into an error so that bad
// input never crashes the binary.
func Safely(f func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("the YAML parser failed: %v", r)
		}
	}()
	return f()
}

// Normalize converts the maps a YAML decoder may produce with non-string keys into
// map[string]any, at any depth, copying as it goes; a timestamp becomes its text (a date
// when it has no time of day).
func Normalize(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[k] = Normalize(e)
		}
		return out
	case map[any]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[fmt.Sprint(k)] = Normalize(e)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = Normalize(e)
		}
		return out
	case time.Time:
		if v.Equal(v.Truncate(24 * time.Hour)) {
			return v.Format(time.DateOnly)
		}
		return v.Format(time.RFC3339Nano)
	}
	return v
}
