package suggest

import (
	"fmt"
	"slices"
	"testing"
)

func TestDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"abc", "abc", 0},
		{"", "abc", 6},
		{"abc", "", 6},
		{"get_sum", "get-sum", 1},
		{"Command", "command", 1},
		{"mem", "mme", 2}, // one transposition
		{"kitten", "sitting", 6},
		{"manged", "managed", 2},
		{"a-b", "a_B", 2},
	} {
		if got := Distance(tc.a, tc.b); got != tc.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
		if got := Distance(tc.b, tc.a); got != tc.want {
			t.Errorf("Distance(%q, %q) = %d, want %d (symmetry)", tc.b, tc.a, got, tc.want)
		}
	}
}

func TestClosest(t *testing.T) {
	bare := func(c string) string {
		for i := len(c) - 2; i > 0; i-- {
			if c[i] == '_' && c[i+1] == '_' {
				return c[i+2:]
			}
		}
		return ""
	}
	tools := []string{"mcp__ev__get-sum", "mcp__ev__get-env", "mcp__fs__read_file", "mcp__fs__write_file"}
	for _, tc := range []struct {
		name  string
		names []string
		alias func(string) string
		want  []string
	}{
		{"mcp__ev__get_sum", tools, bare, []string{"mcp__ev__get-sum"}},
		{"get-sum", tools, bare, []string{"mcp__ev__get-sum"}},
		{"get-sum", tools, nil, nil},
		{"mcp__fs__read-file", tools, bare, []string{"mcp__fs__read_file"}},
		{"Greeting", []string{"greeting", "name"}, nil, []string{"greeting"}},
		{"mme", []string{"mem", "fs"}, nil, []string{"mem"}},
		{"manged", []string{"managed", "demo"}, nil, []string{"managed"}},
		{"zzz", []string{"mem", "fs"}, nil, nil},
		{"mem", []string{"mem"}, nil, nil},
		{"ab", []string{"ba", "ab", "abc", "xy"}, nil, []string{"abc", "ba"}},
	} {
		got := Closest(tc.name, tc.names, Options{Alias: tc.alias})
		if !slices.Equal(got, tc.want) {
			t.Errorf("Closest(%q, %v) = %q, want %q", tc.name, tc.names, got, tc.want)
		}
	}
	many := []string{"aaaa", "aaab", "aaac", "aaad", "aaae"}
	if got := Closest("aaaz", many, Options{Max: 2}); !slices.Equal(got, []string{"aaaa", "aaab"}) {
		t.Errorf("Max 2: %q", got)
	}
}

func ExamplePhrase() {
	fmt.Println(Phrase(Closest("mcp__ev__get_sum", []string{"mcp__ev__get-sum", "mcp__ev__echo"}, Options{})))
	fmt.Printf("%q\n", Phrase(nil))
	fmt.Println(Phrase([]string{"a", "b", "c"}))
	// Output:
	// did you mean "mcp__ev__get-sum"?
	// ""
	// did you mean "a", "b" or "c"?
}
