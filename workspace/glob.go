package workspace

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxGlobResults bounds what glob returns.
const maxGlobResults = 1000

type globInput struct {
	Pattern string `json:"pattern" jsonschema:"a glob: * and ? within a name, ** across directories, [a-z] classes, {a,b} alternatives; e.g. **/*.go or src/**/*.{ts,tsx}"`
	Path    string `json:"path,omitempty" jsonschema:"the directory the pattern is relative to (default: the workspace root)"`
}

// glob is the glob tool.
func (s *Server) glob(cx context.Context, _ *mcp.CallToolRequest, in globInput) (*mcp.CallToolResult, any, error) {
	if !doublestar.ValidatePattern(in.Pattern) || in.Pattern == "" {
		return nil, nil, fmt.Errorf("pattern %q is not a valid glob", in.Pattern)
	}
	base, err := s.root.rel(in.Path)
	if err != nil {
		return nil, nil, err
	}
	pattern := strings.TrimPrefix(in.Pattern, "./")
	// Start below the pattern's fixed directories (src/**/*.go walks src only).
	start := base
	if dir, rest := doublestar.SplitPattern(pattern); dir != "." && !strings.Contains(dir, "..") {
		start = path.Join(base, dir)
		pattern = rest
	}
	var found []string
	match := func(rel string) bool {
		sub := strings.TrimPrefix(rel, start+"/")
		if start == "." {
			sub = rel
		}
		ok, _ := doublestar.Match(pattern, sub)
		return ok
	}
	err = walker{s: s, keepFile: match}.walk(cx, start, func(f walkFile) bool {
		f.dir.release()
		found = append(found, f.rel)
		return len(found) <= maxGlobResults
	})
	if err != nil && !errors.Is(err, context.Canceled) {
		if start != base {
			return text(fmt.Sprintf("no files match %q", in.Pattern)), nil, nil
		}
		return nil, nil, fileError(in.Path, err)
	}
	if len(found) == 0 {
		return text(fmt.Sprintf("no files match %q (files .gitignore ignores are skipped)", in.Pattern)), nil, nil
	}
	var b strings.Builder
	for i, f := range found {
		if i == maxGlobResults {
			fmt.Fprintf(&b, "[more than %d files match: narrow the pattern]\n", maxGlobResults)
			break
		}
		b.WriteString(f)
		b.WriteByte('\n')
	}
	return text(b.String()), nil, nil
}
