package ptc

import (
	"errors"
	"math/big"
	"reflect"
	"strconv"
	"strings"

	"github.com/dop251/goja"
	"github.com/dop251/goja/ast"
	"github.com/dop251/goja/file"
	"github.com/dop251/goja/parser"
	"github.com/evanw/esbuild/pkg/api"
)

// programName is the file name the program's positions refer to.
const programName = "program.ts"

// The program's body is wrapped in an async function expression on its first line, so its
// line numbers stay the model's.
const (
	wrapStart = "(async function () {"
	wrapEnd   = "\n})()"
)

// errNoSourceMapFiles refuses every source map that is not inline: the interpreter would
// otherwise read one from the file system.
var errNoSourceMapFiles = errors.New("source maps are read from the program only")

// errBigInt explains why BigInt is not available.
const errBigInt = "BigInt is not available in programs: its arithmetic allocates without bound inside one operator (1n << 10n ** 10n), which the memory limit cannot stop; use numbers"

// compileProgram strips the TypeScript types of code with esbuild (keeping a source map, so
// positions are the model's lines) and compiles the result for goja.
//
// A program that is already JavaScript (no type annotations) skips esbuild: goja parses it
// as it is, with the same line numbers, unless it spreads or collects an object's
// properties ({...x}, const {a, ...rest} = x): goja copies those in one Go loop that no
// guard can stop (a string of a million characters makes a million properties), so esbuild
// rewrites them as calls of a helper whose loop is the program's own. BigInt literals are
// refused (errBigInt).
func compileProgram(code string) (*goja.Program, *Error) {
	wrapped := wrapStart + code + wrapEnd
	if ast, err := goja.Parse(programName, wrapped, parser.WithDisableSourceMaps); err == nil {
		f := prepareSource(ast)
		if e := f.refused(ast); e != nil {
			return nil, e
		}
		if !f.objectSpread {
			if prg, err := goja.CompileAST(ast, true); err == nil {
				return prg, nil
			}
		}
	}
	res := api.Transform(wrapped, api.TransformOptions{
		Loader:         api.LoaderTS,
		Target:         api.ES2020,
		Supported:      map[string]bool{"object-rest-spread": false},
		Sourcemap:      api.SourceMapInline,
		SourcesContent: api.SourcesContentExclude,
		Sourcefile:     programName,
	})
	if len(res.Errors) > 0 {
		m := res.Errors[0]
		e := &Error{Kind: KindCompile, Msg: m.Text}
		if m.Location != nil {
			e.Line = m.Location.Line
			e.Source = strings.TrimSpace(m.Location.LineText)
			if e.Line == 1 {
				e.Source = strings.TrimSpace(strings.TrimPrefix(m.Location.LineText, wrapStart))
			}
		}
		if strings.Contains(code, "import") || strings.Contains(code, "export") {
			e.Msg += " (a program has no modules: import and export are not available; call tools through the global tools object)"
		}
		return nil, e
	}
	ast, err := goja.Parse(programName, string(res.Code), parser.WithSourceMapLoader(func(string) ([]byte, error) {
		return nil, errNoSourceMapFiles
	}))
	if err != nil {
		return nil, &Error{Kind: KindCompile, Msg: err.Error()}
	}
	if e := prepareSource(ast).refused(ast); e != nil {
		return nil, e
	}
	prg, err := goja.CompileAST(ast, true)
	if err != nil {
		return nil, &Error{Kind: KindCompile, Msg: err.Error()}
	}
	return prg, nil
}

// refused is the compile error for what a program may not use (BigInt, the helpers'
// names), nil when it uses neither.
func (f sourceFeatures) refused(p *ast.Program) *Error {
	var e *Error
	var at file.Idx
	switch {
	case f.bigInt:
		e, at = &Error{Kind: KindCompile, Msg: errBigInt}, f.bigIntAt
	case f.reserved != "":
		e, at = &Error{Kind: KindCompile, Msg: reservedError(f.reserved)}, f.reservedAt
	default:
		return nil
	}
	if p.File != nil && at > 0 {
		e.Line = p.File.Position(int(at) - 1).Line
	}
	return e
}

// reservedError explains why name is refused.
func reservedError(name string) string {
	return name + " is a name the sandbox keeps for itself (names starting with " + concatPrefix + " are reserved); rename it"
}

// sourceFeatures are what prepareSource found in a program.
type sourceFeatures struct {
	bigInt       bool     // a BigInt literal
	bigIntAt     file.Idx // where the first one is
	objectSpread bool     // object spread ({...x}) or rest ({...rest} = x)
	reserved     string   // the first name the helpers keep (reservedName)
	reservedAt   file.Idx // where it is
}

var astPackage = reflect.TypeFor[ast.Program]().PkgPath()

// walkSyntax visits every node of a syntax tree once, in order: see is called with each
// node (a pointer) before its children; replace, when not nil, with each expression held in
// a field or list after its children, and an expression it returns takes that one's place.
func walkSyntax(p *ast.Program, see func(node any), replace func(ast.Expression) ast.Expression) {
	seen := map[uintptr]bool{}
	var walk func(v reflect.Value)
	walk = func(v reflect.Value) {
		switch v.Kind() {
		case reflect.Pointer:
			if v.IsNil() || seen[v.Pointer()] {
				return
			}
			seen[v.Pointer()] = true
			if v.CanInterface() {
				see(v.Interface())
			}
			walk(v.Elem())
		case reflect.Interface:
			if v.IsNil() {
				return
			}
			walk(v.Elem())
			if replace == nil || !v.CanSet() {
				return
			}
			if e, ok := v.Interface().(ast.Expression); ok {
				if r := replace(e); r != nil {
					v.Set(reflect.ValueOf(r))
				}
			}
		case reflect.Struct:
			if v.Type().PkgPath() != astPackage {
				return
			}
			for i := range v.NumField() {
				walk(v.Field(i))
			}
		case reflect.Slice:
			for i := range v.Len() {
				walk(v.Index(i))
			}
		}
	}
	walk(reflect.ValueOf(p))
}

// prepareSource walks a syntax tree once: it finds the features compile treats apart and
// rewrites the concatenations (concatCall). A tree that is then refused, or compiled again
// from esbuild's output, is dropped, so rewriting it first costs nothing that matters.
func prepareSource(p *ast.Program) sourceFeatures {
	var f sourceFeatures
	walkSyntax(p, func(node any) {
		switch n := node.(type) {
		case *ast.NumberLiteral:
			if _, ok := n.Value.(*big.Int); ok && !f.bigInt {
				f.bigInt, f.bigIntAt = true, n.Idx
			}
		case *ast.ObjectLiteral:
			for _, p := range n.Value {
				if _, ok := p.(*ast.SpreadElement); ok {
					f.objectSpread = true
				}
			}
		case *ast.ObjectPattern:
			if n.Rest != nil {
				f.objectSpread = true
			}
		case *ast.Identifier:
			if f.reserved == "" && reservedName(n.Name.String()) {
				f.reserved, f.reservedAt = n.Name.String(), n.Idx
			}
		}
	}, concatCall)
	return f
}

// compileRunTime compiles code built at run time (what: eval or a Function constructor) as
// compileProgram does a program: its size counts against the budget, BigInt, object spread
// and the helpers' names are refused (thrown as a TypeError), and its concatenations are
// rewritten. Nil when src does not compile: the original then reports the error as the
// language says.
func (x *run) compileRunTime(what, src string) *goja.Program {
	x.allow(what+" of "+strconv.Itoa(len(src))+" characters", int64(len(src))*bytesPerSourceChar)
	p, err := goja.Parse("eval", src, parser.WithDisableSourceMaps)
	if err != nil {
		return nil
	}
	f := prepareSource(p)
	if e := f.refused(p); e != nil {
		panic(x.vm.NewTypeError(what + ": " + e.Msg))
	}
	if f.objectSpread {
		panic(x.vm.NewTypeError(what + ": object spread and rest ({...x}) are not available in code built at run time; copy the properties with Object.assign"))
	}
	prg, err := goja.CompileAST(p, false)
	if err != nil {
		return nil
	}
	return prg
}

// runCompiled runs code compileRunTime compiled, at global scope as an indirect eval would,
// rethrowing what it throws.
func (x *run) runCompiled(prg *goja.Program) goja.Value {
	v, err := x.vm.RunProgram(prg)
	if err != nil {
		panic(err)
	}
	return v
}
