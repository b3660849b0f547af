package doccheck

import (
	"bufio"
	"bytes"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// block is one ```go block of a Markdown file.
type block struct {
	file    string // relative to the module root
	line    int    // line of the first line of code
	code    string
	path    string   // import path given by a doccheck comment, for package blocks
	prelude []string // declarations given by a doccheck comment
	source  string   // "example DIR FUNC" or "file DIR/FILE.go" given by a doccheck comment
}

// knownImports are the packages a fragment may use without importing them: the fragment
// is given the imports it refers to.
var knownImports = map[string]string{
	"context":      "context",
	"errors":       "errors",
	"fmt":          "fmt",
	"io":           "io",
	"json":         "encoding/json",
	"os":           "os",
	"slog":         "log/slog",
	"strings":      "strings",
	"testing":      "testing",
	"time":         "time",
	"atomic":       "sync/atomic",
	"ctx":          "github.com/cordisgo/harness/ctx",
	"ctxtest":      "github.com/cordisgo/harness/ctx/ctxtest",
	"mcpclient":    "github.com/cordisgo/harness/plugins/mcpclient",
	"mcpmanager":   "github.com/cordisgo/harness/plugins/mcpmanager",
	"mcpresources": "github.com/cordisgo/harness/plugins/mcpresources",
	"permission":   "github.com/cordisgo/harness/permission",
	"remote":       "github.com/cordisgo/harness/plugins/remote",
	"sysprompt":    "github.com/cordisgo/harness/plugins/sysprompt",
	"toolregistry": "github.com/cordisgo/harness/plugins/toolregistry",
}

// TestDocBlocksCompile type-checks every ```go block of README.md and docs/*.md. The
// conventions (also in docs/plugins.md, "Examples in the docs"):
//
//   - A block whose first line of code starts with "package" is a whole file and is checked
//     as its own package.
//   - Any other block is a fragment. If it parses as top-level declarations it is checked
//     as such; otherwise it is the body of a function func(c *ctx.Context) error (a return
//     nil is added at the end). A fragment gets the imports of the packages it refers to
//     among knownImports; unused variables and imports are not errors in a fragment.
//   - An HTML comment right before the block, "<!-- doccheck" up to "-->", adds to it: a
//     line "path IMPORT/PATH" names a package block so that later blocks can import it, and
//     a line "import PATH" adds an import, and any other line is a Go declaration added next
//     to the fragment (for the names it uses but does not show, such as
//     var dial func(context.Context) (io.Closer, error)).
//
// Blocks that are not Go are fenced with another language (sh, yaml, text).
func TestDocBlocksCompile(t *testing.T) {
	top, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(top, "docs", "*.md"))
	files = append([]string{filepath.Join(top, "README.md")}, files...)
	var blocks []block
	for _, f := range files {
		b, err := extract(top, f)
		if err != nil {
			t.Fatal(err)
		}
		blocks = append(blocks, b...)
	}
	if len(blocks) == 0 {
		t.Fatal("no go blocks found in README.md and docs/*.md")
	}

	fset := token.NewFileSet()
	type unit struct {
		b        block
		file     *ast.File
		fragment bool
	}
	var units []unit
	wanted := map[string]bool{}
	for _, b := range blocks {
		src, fragment := source(b)
		f, err := parser.ParseFile(fset, "doccheck.go", src, parser.ParseComments) // positions come from the //line directive
		if err != nil {
			t.Errorf("%v\n(the go block at %s:%d does not parse; fence blocks that are not Go as another language)", err, b.file, b.line)
			continue
		}
		units = append(units, unit{b, f, fragment})
		for _, imp := range f.Imports {
			wanted[strings.Trim(imp.Path.Value, `"`)] = true
		}
	}
	local := map[string]*types.Package{}
	exports, err := exportData(top, wanted, blocks)
	if err != nil {
		t.Fatal(err)
	}
	gc := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		if e := exports[path]; e != "" {
			return os.Open(e)
		}
		return nil, fmt.Errorf("no export data for %q (a package of the module, the standard library or a dependency in go.mod, or a doc block with a doccheck path)", path)
	})
	imp := importerFunc(func(path string) (*types.Package, error) {
		if p := local[path]; p != nil {
			return p, nil
		}
		return gc.Import(path)
	})
	for _, u := range units {
		var errs []string
		conf := types.Config{Importer: imp, Error: func(err error) {
			msg := err.Error()
			if u.fragment && (strings.Contains(msg, "declared and not used") || strings.Contains(msg, "imported and not used")) {
				return
			}
			errs = append(errs, msg)
		}}
		path := u.b.path
		if path == "" {
			path = fmt.Sprintf("doc/%s/%d", u.b.file, u.b.line)
		}
		pkg, _ := conf.Check(path, fset, []*ast.File{u.file}, nil)
		if len(errs) > 0 {
			t.Errorf("the go block at %s:%d does not compile:\n\t%s", u.b.file, u.b.line, strings.Join(errs, "\n\t"))
			continue
		}
		if u.b.path != "" {
			local[u.b.path] = pkg
		}
	}
}

type importerFunc func(path string) (*types.Package, error)

func (f importerFunc) Import(path string) (*types.Package, error) { return f(path) }

var fence = regexp.MustCompile("^```(\\S*)")

// extract returns the go blocks of the Markdown file path.
func extract(top, path string) ([]block, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	rel, _ := filepath.Rel(top, path)
	rel = filepath.ToSlash(rel)
	var (
		out     []block
		cur     *block
		inFence bool
		comment []string // lines of the doccheck comment being read
		inCmt   bool
		pending []string // the doccheck comment right before the next fence
		code    strings.Builder
		lineNo  int
	)
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		lineNo++
		line := sc.Text()
		switch {
		case inFence:
			if strings.HasPrefix(line, "```") {
				inFence = false
				if cur != nil {
					cur.code = code.String()
					out = append(out, *cur)
					cur = nil
				}
				continue
			}
			code.WriteString(line + "\n")
		case inCmt:
			if strings.TrimSpace(line) == "-->" {
				inCmt, pending = false, comment
				continue
			}
			comment = append(comment, line)
		case strings.TrimSpace(line) == "<!-- doccheck":
			inCmt, comment = true, nil
		case fence.MatchString(line):
			inFence = true
			if fence.FindStringSubmatch(line)[1] == "go" {
				cur = &block{file: rel, line: lineNo + 1}
				for _, l := range pending {
					if p, ok := strings.CutPrefix(strings.TrimSpace(l), "path "); ok {
						cur.path = strings.TrimSpace(p)
					} else if isSourceLine(l) {
						cur.source = strings.TrimSpace(l)
					} else if strings.TrimSpace(l) != "" {
						cur.prelude = append(cur.prelude, l)
					}
				}
				code.Reset()
			}
			pending = nil
		default:
			if strings.TrimSpace(line) != "" {
				pending = nil // a doccheck comment applies to the block right after it only
			}
		}
	}
	return out, sc.Err()
}

var selector = regexp.MustCompile(`\b([a-z][a-z0-9]*)\.`)

// source returns the Go file to check for b, and whether b is a fragment.
func source(b block) (string, bool) {
	directive := fmt.Sprintf("//line %s:%d\n", b.file, b.line)
	if first := strings.TrimSpace(b.code); strings.HasPrefix(first, "package ") {
		return directive + b.code, false
	}
	var imports, decls []string
	seen := map[string]bool{}
	for _, p := range b.prelude {
		if spec, ok := strings.CutPrefix(strings.TrimSpace(p), "import "); ok {
			imports = append(imports, spec)
		} else {
			decls = append(decls, p)
		}
	}
	for _, text := range append(slices.Clone(decls), b.code) {
		for _, m := range selector.FindAllStringSubmatch(text, -1) {
			if p, ok := knownImports[m[1]]; ok && !seen[p] {
				seen[p] = true
				imports = append(imports, fmt.Sprintf("%s %q", m[1], p))
			}
		}
	}
	slices.Sort(imports)
	var src strings.Builder
	src.WriteString("package doc\n\nimport (\n")
	for _, i := range imports {
		src.WriteString("\t" + i + "\n")
	}
	src.WriteString(")\n\n")
	for _, p := range decls {
		src.WriteString(p + "\n")
	}
	if _, err := parser.ParseFile(token.NewFileSet(), "", "package doc\n"+b.code, 0); err == nil {
		src.WriteString(directive + b.code)
		return src.String(), true
	}
	src.WriteString("func _(c *ctx.Context) error {\n" + directive + b.code + "\treturn nil\n}\n")
	if !seen[knownImports["ctx"]] {
		return strings.Replace(src.String(), "import (\n", "import (\n\tctx \""+knownImports["ctx"]+"\"\n", 1), true
	}
	return src.String(), true
}

// exportData compiles (through the build cache) the packages the blocks import and returns
// the export data file of each, and of their dependencies, by import path.
func exportData(top string, wanted map[string]bool, blocks []block) (map[string]string, error) {
	for _, b := range blocks {
		delete(wanted, b.path) // provided by another block
	}
	if len(wanted) == 0 {
		return nil, nil
	}
	args := []string{"list", "-export", "-deps", "-f", "{{.ImportPath}}={{.Export}}"}
	for p := range wanted {
		args = append(args, p)
	}
	cmd := exec.Command("go", args...)
	cmd.Dir = top
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list -export: %w\n%s", err, stderr.String())
	}
	m := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if p, e, ok := strings.Cut(l, "="); ok && e != "" {
			m[p] = e
		}
	}
	return m, nil
}
