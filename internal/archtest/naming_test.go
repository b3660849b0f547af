package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"regexp"
	"strings"
	"testing"
)

// TestCtxNameIsThePackage enforces the naming rule of docs/plugins.md ("Naming"): in a file
// that imports the ctx package, the name the package is imported under (ctx) always means
// the package. No receiver, parameter, result or local declaration of a function with a
// body is named ctx, so package-level identifiers (ctx.Define, ctx.Dependency, ctx.Prepend)
// can be used anywhere in the file and every example reads the same way. A *ctx.Context is
// called c (or after its role: root, agent, sub); a context.Context is cx
// ([TestContextVariableNames]). Test files are checked too.
func TestCtxNameIsThePackage(t *testing.T) {
	checked := 0
	_, err := walkGoFiles(parser.SkipObjectResolution, nil, func(g goFile) error {
		name := g.importName(module + "/ctx")
		if name == "" {
			return nil
		}
		checked++
		for _, id := range shadowingDecls(g.f, name) {
			t.Errorf("%s: %q is declared here, but in a file that imports the ctx package %q means the package: name a *ctx.Context c (or after its role) and a context.Context cx (docs/plugins.md, \"Naming\")",
				g.line(id.Pos()), id.Name, name)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked == 0 {
		t.Fatal("no file importing the ctx package checked")
	}
}

// shadowingDecls returns the identifiers called name that f declares inside functions with
// a body (receivers, parameters and results included).
func shadowingDecls(f *ast.File, name string) []*ast.Ident {
	var out []*ast.Ident
	fields := func(lists ...*ast.FieldList) {
		for _, l := range lists {
			if l == nil {
				continue
			}
			for _, fld := range l.List {
				for _, id := range fld.Names {
					if id.Name == name {
						out = append(out, id)
					}
				}
			}
		}
	}
	idents := func(exprs ...ast.Expr) {
		for _, e := range exprs {
			if id, ok := e.(*ast.Ident); ok && id.Name == name {
				out = append(out, id)
			}
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncDecl:
			if n.Body != nil {
				fields(n.Recv, n.Type.TypeParams, n.Type.Params, n.Type.Results)
			}
		case *ast.FuncLit:
			fields(n.Type.Params, n.Type.Results)
		case *ast.AssignStmt:
			if n.Tok == token.DEFINE {
				idents(n.Lhs...)
			}
		case *ast.RangeStmt:
			if n.Tok == token.DEFINE {
				idents(n.Key, n.Value)
			}
		case *ast.DeclStmt:
			if g, ok := n.Decl.(*ast.GenDecl); ok {
				for _, s := range g.Specs {
					switch s := s.(type) {
					case *ast.ValueSpec:
						for _, id := range s.Names {
							idents(id)
						}
					case *ast.TypeSpec:
						idents(s.Name)
					}
				}
			}
		}
		return true
	})
	return out
}

// TestContextVariableNames enforces the one name style for a context.Context variable
// (docs/design.md, "Code style"; docs/plugins.md, "Naming"): cx, or, where a function holds
// several, a short prefix and cx (rcx for a request's, pcx for a parent's, runcx for a
// worker's run). Parameters, results, var declarations and the variables that
// context.Background, TODO and the With* functions are assigned to are checked, in every
// file, tests included; struct fields are not variables and keep their names.
func TestContextVariableNames(t *testing.T) {
	good := regexp.MustCompile(`^(_|[a-z]*cx[0-9]?)$`)
	checked := 0
	_, err := walkGoFiles(parser.SkipObjectResolution, nil, func(g goFile) error {
		f := g.f
		pkg := g.importName("context")
		if pkg == "" {
			return nil
		}
		checked++
		bad := func(id *ast.Ident) {
			if !good.MatchString(id.Name) {
				t.Errorf("%s: the context.Context %q: call it cx (or a short prefix and cx where a function holds several: rcx, pcx, runcx; docs/design.md, \"Code style\")",
					g.line(id.Pos()), id.Name)
			}
		}
		isContext := func(e ast.Expr) bool {
			s, ok := e.(*ast.SelectorExpr)
			if !ok || s.Sel.Name != "Context" {
				return false
			}
			x, ok := s.X.(*ast.Ident)
			return ok && x.Name == pkg
		}
		fields := func(lists ...*ast.FieldList) {
			for _, l := range lists {
				if l == nil {
					continue
				}
				for _, fld := range l.List {
					if isContext(fld.Type) {
						for _, id := range fld.Names {
							bad(id)
						}
					}
				}
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.FuncDecl:
				fields(n.Type.Params, n.Type.Results)
			case *ast.FuncLit:
				fields(n.Type.Params, n.Type.Results)
			case *ast.ValueSpec:
				if n.Type != nil && isContext(n.Type) {
					for _, id := range n.Names {
						bad(id)
					}
				}
			case *ast.AssignStmt:
				if n.Tok != token.DEFINE || len(n.Rhs) != 1 {
					return true
				}
				call, ok := n.Rhs[0].(*ast.CallExpr)
				if !ok {
					return true
				}
				s, ok := call.Fun.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				if x, ok := s.X.(*ast.Ident); ok && x.Name == pkg && (s.Sel.Name == "Background" || s.Sel.Name == "TODO" || strings.HasPrefix(s.Sel.Name, "With")) {
					if id, ok := n.Lhs[0].(*ast.Ident); ok {
						bad(id)
					}
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked == 0 {
		t.Fatal("no file importing context checked")
	}
}
