package doccheck

import (
	"fmt"
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// sourcedDocs are the Markdown files whose every Go block is kept in the module's code (see
// TestDocBlocksHaveSources): their examples run, not only compile.
var sourcedDocs = []string{"docs/plugins.md"}

// isSourceLine reports whether a doccheck comment line names the code a block is kept in.
func isSourceLine(l string) bool {
	l = strings.TrimSpace(l)
	return strings.HasPrefix(l, "example ") || strings.HasPrefix(l, "file ")
}

// TestDocBlocksHaveSources checks that every Go block of sourcedDocs is kept, as it is
// shown, in the module's code, so that the example runs under go test and the doc cannot
// drift from it. The block's doccheck comment names where, with one of:
//
//   - "example DIR FUNC": the block is the body of the function FUNC (dedented one tab) in a
//     _test.go file of the package in DIR, or the whole declaration of FUNC (its doc comment
//     included or not). FUNC is an Example with an "// Output:" comment, a Test, or a
//     function such an Example or Test calls.
//   - "file DIR/NAME.go": the block is that file — the whole file for a block that starts
//     with "package", else the file after its package clause and imports. The package in
//     DIR has an Example with an "// Output:" comment. When a block names an import path
//     (doccheck "path"), that path stands for DIR's in the files compared (so the docs can
//     say example.com/clock).
//
// Text is compared line by line, trailing blanks and blank lines at either end ignored.
func TestDocBlocksHaveSources(t *testing.T) {
	top, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	var blocks []block
	for _, rel := range sourcedDocs {
		b, err := extract(top, filepath.Join(top, rel))
		if err != nil {
			t.Fatal(err)
		}
		blocks = append(blocks, b...)
	}
	// The import paths the docs use for the module's packages, by the module path.
	aliases := map[string]string{}
	for _, b := range blocks {
		if dir, ok := strings.CutPrefix(b.source, "file "); ok && b.path != "" {
			aliases[modulePath+"/"+filepath.ToSlash(filepath.Dir(strings.TrimSpace(dir)))] = b.path
		}
	}
	pkgs := map[string]*examplePackage{}
	for _, b := range blocks {
		where := fmt.Sprintf("the go block at %s:%d", b.file, b.line)
		if b.source == "" {
			t.Errorf("%s has no source: add a doccheck comment line \"example DIR FUNC\" or \"file DIR/NAME.go\" naming the code it is kept in", where)
			continue
		}
		kind, rest, _ := strings.Cut(b.source, " ")
		fields := strings.Fields(rest)
		var dir string
		switch {
		case kind == "example" && len(fields) == 2:
			dir = fields[0]
		case kind == "file" && len(fields) == 1:
			dir = filepath.Dir(fields[0])
		default:
			t.Errorf("%s: doccheck %q: expected \"example DIR FUNC\" or \"file DIR/NAME.go\"", where, b.source)
			continue
		}
		p := pkgs[dir]
		if p == nil {
			if p, err = loadExamplePackage(filepath.Join(top, dir)); err != nil {
				t.Errorf("%s: %v", where, err)
				continue
			}
			pkgs[dir] = p
		}
		var candidates []string
		if kind == "example" {
			name := fields[1]
			fn := p.funcs[name]
			if fn == nil {
				t.Errorf("%s: no function %s in the _test.go files of %s", where, name, dir)
				continue
			}
			if !p.runs(name) {
				t.Errorf("%s: %s in %s is not run by go test: make it an Example with an // Output: comment or a Test, or call it from one", where, name, dir)
			}
			candidates = fn.texts()
		} else {
			if len(p.outputs) == 0 {
				t.Errorf("%s: the package in %s has no Example with an // Output: comment", where, dir)
			}
			data, err := os.ReadFile(filepath.Join(top, fields[0]))
			if err != nil {
				t.Errorf("%s: %v", where, err)
				continue
			}
			text := string(data)
			for real, shown := range aliases {
				text = strings.ReplaceAll(text, `"`+real+`"`, `"`+shown+`"`)
			}
			if !strings.HasPrefix(strings.TrimSpace(b.code), "package ") {
				text, err = afterImports(text)
				if err != nil {
					t.Errorf("%s: %s: %v", where, fields[0], err)
					continue
				}
			}
			candidates = []string{text}
		}
		got := normalize(b.code)
		if !slices.ContainsFunc(candidates, func(c string) bool { return normalize(c) == got }) {
			t.Errorf("%s differs from its source (%s); the source reads:\n%s", where, b.source, normalize(candidates[0]))
		}
	}
}

const modulePath = "github.com/cordisgo/harness"

// examplePackage is what TestDocBlocksHaveSources reads of a package: the functions of its
// _test.go files and the names of its Examples with output and its Tests.
type examplePackage struct {
	funcs   map[string]*function
	outputs map[string]bool // Examples with an // Output: comment, by function name
	tests   map[string]bool
}

// function is a function declaration and the text of its file.
type function struct {
	decl *ast.FuncDecl
	fset *token.FileSet
	src  []byte
}

// texts returns the forms a block may take of f: its body, dedented one tab, its
// declaration, and its declaration with its doc comment.
func (f *function) texts() []string {
	off := func(p token.Pos) int { return f.fset.Position(p).Offset }
	body := string(f.src[off(f.decl.Body.Lbrace)+1 : off(f.decl.Body.Rbrace)])
	lines := strings.Split(body, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimPrefix(l, "\t")
	}
	out := []string{strings.Join(lines, "\n"), string(f.src[off(f.decl.Pos()):off(f.decl.End())])}
	if f.decl.Doc != nil {
		out = append(out, string(f.src[off(f.decl.Doc.Pos()):off(f.decl.End())]))
	}
	return out
}

// runs reports whether go test runs name: an Example with output, a Test, or a function one
// of them calls by name.
func (p *examplePackage) runs(name string) bool {
	if p.outputs[name] || p.tests[name] {
		return true
	}
	for caller, f := range p.funcs {
		if !p.outputs[caller] && !p.tests[caller] {
			continue
		}
		called := false
		ast.Inspect(f.decl.Body, func(n ast.Node) bool {
			if id, ok := n.(*ast.Ident); ok && id.Name == name {
				called = true
			}
			return !called
		})
		if called {
			return true
		}
	}
	return false
}

// loadExamplePackage parses the _test.go files of dir.
func loadExamplePackage(dir string) (*examplePackage, error) {
	names, err := filepath.Glob(filepath.Join(dir, "*_test.go"))
	if err != nil || len(names) == 0 {
		return nil, fmt.Errorf("no _test.go files in %s", dir)
	}
	p := &examplePackage{funcs: map[string]*function{}, outputs: map[string]bool{}, tests: map[string]bool{}}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, name := range names {
		src, err := os.ReadFile(name)
		if err != nil {
			return nil, err
		}
		f, err := parser.ParseFile(fset, name, src, parser.ParseComments)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil {
				p.funcs[fd.Name.Name] = &function{decl: fd, fset: fset, src: src}
				if strings.HasPrefix(fd.Name.Name, "Test") {
					p.tests[fd.Name.Name] = true
				}
			}
		}
	}
	for _, ex := range doc.Examples(files...) {
		if ex.Output != "" || ex.EmptyOutput {
			p.outputs["Example"+ex.Name] = true
		}
	}
	return p, nil
}

// afterImports returns src after its package clause and import declarations.
func afterImports(src string) (string, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "", src, parser.ImportsOnly|parser.ParseComments)
	if err != nil {
		return "", err
	}
	end := f.Name.End()
	for _, d := range f.Decls {
		if gd, ok := d.(*ast.GenDecl); ok && gd.Tok == token.IMPORT {
			end = gd.End()
		}
	}
	return src[fset.Position(end).Offset:], nil
}

// normalize trims trailing blanks of every line and blank lines at either end.
func normalize(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " \t\r")
	}
	return strings.Trim(strings.Join(lines, "\n"), "\n")
}
