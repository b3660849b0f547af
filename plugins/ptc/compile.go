package ptc

import (
	"errors"
	"math/big"
	"reflect"
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
		f := scanSource(ast)
		if f.bigInt {
			return nil, bigIntError(ast, f)
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
	if f := scanSource(ast); f.bigInt {
		return nil, bigIntError(ast, f)
	}
	prg, err := goja.CompileAST(ast, true)
	if err != nil {
		return nil, &Error{Kind: KindCompile, Msg: err.Error()}
	}
	return prg, nil
}

func bigIntError(p *ast.Program, f sourceFeatures) *Error {
	e := &Error{Kind: KindCompile, Msg: errBigInt}
	if p.File != nil && f.bigIntAt > 0 {
		e.Line = p.File.Position(int(f.bigIntAt) - 1).Line
	}
	return e
}

// sourceFeatures are what scanSource found in a program.
type sourceFeatures struct {
	bigInt       bool     // a BigInt literal
	bigIntAt     file.Idx // where the first one is
	objectSpread bool     // object spread ({...x}) or rest ({...rest} = x)
}

var astPackage = reflect.TypeFor[ast.Program]().PkgPath()

// scanSource walks a syntax tree for the features compileProgram treats apart.
func scanSource(p *ast.Program) sourceFeatures {
	var f sourceFeatures
	var walk func(v reflect.Value)
	walk = func(v reflect.Value) {
		switch v.Kind() {
		case reflect.Interface, reflect.Pointer:
			if v.IsNil() {
				return
			}
			if v.Kind() == reflect.Pointer && v.CanInterface() {
				switch n := v.Interface().(type) {
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
				}
			}
			walk(v.Elem())
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
	return f
}
