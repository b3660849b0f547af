package yamlnode

import (
	"fmt"
	"strconv"
)

// Value renders a decoded value (of JSON, YAML or TOML) for "got ..." in messages: a short
// string quoted, a long one by its length only (so that a misplaced secret is not echoed
// back in full), numbers and booleans with their value, lists and maps by kind.
func Value(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case string:
		if v == "" {
			return "an empty string"
		}
		if len(v) > 40 {
			return "a string of " + strconv.Itoa(len(v)) + " bytes"
		}
		return "string " + strconv.Quote(v)
	case bool:
		return "boolean " + strconv.FormatBool(v)
	case int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
		return fmt.Sprintf("integer %d", v)
	case float32, float64:
		return fmt.Sprintf("number %v", v)
	case []any:
		return "a list"
	case map[string]any, map[any]any:
		return "a map"
	default:
		return fmt.Sprintf("a value of type %T", v)
	}
}

// ValueKind names a decoded value's kind without its value: "a string", "a boolean", "a
// number", and as [Value] says for null, lists and maps.
func ValueKind(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, float32, float64:
		return "a number"
	}
	return Value(v) // null, a list, a map: no value in them
}
