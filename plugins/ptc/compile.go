package ptc

import (
	"errors"
	"strings"

	"github.com/dop251/goja"
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

// compileProgram strips the TypeScript types of code with esbuild (keeping a source map, so
// positions are the model's lines) and compiles the result for goja.
//
// A program that is already JavaScript (no type annotations) skips esbuild: goja parses it
// as it is, with the same line numbers.
func compileProgram(code string) (*goja.Program, *Error) {
	wrapped := wrapStart + code + wrapEnd
	if ast, err := goja.Parse(programName, wrapped, parser.WithDisableSourceMaps); err == nil {
		if prg, err := goja.CompileAST(ast, true); err == nil {
			return prg, nil
		}
	}
	res := api.Transform(wrapped, api.TransformOptions{
		Loader:         api.LoaderTS,
		Target:         api.ES2020,
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
	prg, err := goja.CompileAST(ast, true)
	if err != nil {
		return nil, &Error{Kind: KindCompile, Msg: err.Error()}
	}
	return prg, nil
}
