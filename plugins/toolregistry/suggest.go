package toolregistry

import "github.com/cordisgo/harness/internal/suggest"

// suggestTools returns up to three visible names close to name, nearest first; the bare name of
// an MCP tool ("get-sum" for "mcp__ev__get-sum") counts as a form of the tool's name.
func suggestTools(name string, names []string) []string {
	return suggest.Closest(name, names, suggest.Options{Alias: bareToolName})
}

// bareToolName is the part of an MCP tool's public name after its last "__", or "".
func bareToolName(public string) string {
	for i := len(public) - 2; i > 0; i-- {
		if public[i] == '_' && public[i+1] == '_' {
			return public[i+2:]
		}
	}
	return ""
}

// didYouMean renders suggestions for an error message: `; did you mean "a"?`, "" for none.
func didYouMean(names []string) string {
	if p := suggest.Phrase(names); p != "" {
		return "; " + p
	}
	return ""
}
