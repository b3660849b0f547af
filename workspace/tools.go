package workspace

import (
	"fmt"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The _meta keys of the workspace's tools and results, in the harness's namespace.
const (
	// DryRunMetaKey, on a tool, names its boolean argument that makes a call only say what
	// it would do (the diff of a write, the command of a shell call): a host calls the tool
	// with it set to show an approval what will happen.
	DryRunMetaKey = "harness/dryRun"
	// previewMetaKey, on a dry run's result, says what it shows: "diff" or "command".
	previewMetaKey = "harness/preview"
)

// osCreateExcl opens a new file for writing, failing when it exists.
const osCreateExcl = os.O_WRONLY | os.O_CREATE | os.O_EXCL

// The tools' annotations: exact, since the agent decides from them what runs without
// asking (read-only and not destructive) and what may run alongside other calls.
var (
	readOnly = &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, DestructiveHint: new(false), OpenWorldHint: new(false)}
	// Writes replace what was there: destructive. Writing the same content twice leaves
	// the same file: idempotent. An edit is not (its text may match again).
	writes   = &mcp.ToolAnnotations{DestructiveHint: new(true), IdempotentHint: true, OpenWorldHint: new(false)}
	edits    = &mcp.ToolAnnotations{DestructiveHint: new(true), OpenWorldHint: new(false)}
	commands = &mcp.ToolAnnotations{DestructiveHint: new(true), OpenWorldHint: new(true)}
	// Killing a job the workspace started ends what the model started, nothing else.
	kills = &mcp.ToolAnnotations{DestructiveHint: new(true), IdempotentHint: true, OpenWorldHint: new(false)}
)

// dryRunnable is the _meta of a tool with a dryRun argument.
var dryRunnable = mcp.Meta{DryRunMetaKey: "dryRun"}

// addTools registers the tools the mode offers.
func (s *Server) addTools() {
	mcp.AddTool(s.mcp, &mcp.Tool{
		Name:  "read_file",
		Title: "Read a file",
		Description: fmt.Sprintf("Reads a text file of the workspace and returns its lines numbered as `cat -n` numbers them "+
			"(the numbers and the tab after them are not part of the file). Returns up to %d lines from offset (default 1); "+
			"lines longer than %d bytes are cut. Images (PNG, JPEG, GIF, WebP) come back as images; other binary files are "+
			"described, not shown. Read a file before editing it: an edit of a file that changed since it was read is refused.",
			defaultReadLines, maxLineBytes),
		Annotations: readOnly,
	}, s.readFile)
	mcp.AddTool(s.mcp, &mcp.Tool{
		Name:        "list_dir",
		Title:       "List a directory",
		Description: "Lists a directory of the workspace: subdirectories end with /, symbolic links show their target, files their size. With depth > 1 it lists subdirectories too, skipping .git and what .gitignore ignores.",
		Annotations: readOnly,
	}, s.listDir)
	mcp.AddTool(s.mcp, &mcp.Tool{
		Name:        "glob",
		Title:       "Find files by name",
		Description: fmt.Sprintf("Finds the files of the workspace whose path matches a glob (**/*.go, src/**/*.{ts,tsx}), in path order, at most %d. Skips .git, what .gitignore ignores and symbolic links.", maxGlobResults),
		Annotations: readOnly,
	}, s.glob)
	mcp.AddTool(s.mcp, &mcp.Tool{
		Name:  "grep",
		Title: "Search file contents",
		Description: "Searches the files of the workspace for a regular expression, line by line, like ripgrep: matching lines as path:line:text " +
			"(context lines as path-line-text), the matching files, or counts. Filters by glob or file type; skips .git, what .gitignore " +
			"ignores and binary files. Prefer it to running grep or rg in the shell.",
		Annotations: readOnly,
	}, s.grep)
	if s.opts.Mode != ModeReadOnly {
		mcp.AddTool(s.mcp, &mcp.Tool{
			Name:  "edit_file",
			Title: "Edit a file",
			Description: "Replaces exact text in a file: oldText must occur exactly once (or set all to replace every occurrence), " +
				"copied from read_file's output without the line numbers. Several edits can be given together (edits); each is " +
				"matched in the file as it is, they must not overlap, and they are applied together or not at all. Returns the unified diff.",
			Annotations: edits,
			Meta:        dryRunnable,
		}, s.editFile)
		mcp.AddTool(s.mcp, &mcp.Tool{
			Name:        "write_file",
			Title:       "Write a file",
			Description: "Writes a whole file (made if missing, with its directories; replaced atomically if present) and returns the unified diff. Prefer edit_file to change part of a file.",
			Annotations: writes,
			Meta:        dryRunnable,
		}, s.writeFile)
	}
	s.addShellTools()
}
