package serverdoc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/internal/yamlnode"
)

// ErrInvalid reports a problem of another host's document that is none of the kinds ctx
// names (ctx.ErrSyntax, ctx.ErrUnknownKey, ctx.ErrWrongType, ctx.ErrDuplicateKey): an
// unknown host, a bad server name, a reference the harness cannot express. Each
// [*ctx.ConfigError] [Read] returns has one of the five as its Err (possibly joined with
// an underlying cause); test them with [errors.Is].
var ErrInvalid = errors.New("invalid server document")

// importer words the problems of one document.
type importer struct {
	source, op string
	noValues   bool // describe kinds, not values
}

// describe renders a value for "got ..." in messages; with noValues only its kind.
func (im importer) describe(v any) string {
	if im.noValues {
		return yamlnode.ValueKind(v)
	}
	return yamlnode.Value(v)
}

// fail returns the problem at path: Source is `OP "SOURCE"`, File the source when it is
// a file's path.
func (im importer) fail(path []string, kind error, msg string) *ctx.ConfigError {
	op := im.op
	if op == "" {
		op = "mcp import"
	}
	file := ""
	if isPath(im.source) {
		file = im.source
	}
	return &ctx.ConfigError{Source: fmt.Sprintf("%s %q", op, im.source), File: file, Key: joinPath(path), Msg: msg, Err: kind}
}

// jsonError reports a document that is not a JSON object, with the line of a syntax error.
func (im importer) jsonError(data []byte, err error) *ctx.ConfigError {
	e := im.fail(nil, ctx.ErrSyntax, "invalid JSON: "+strings.TrimPrefix(err.Error(), "json: "))
	e.Err = fmt.Errorf("%w: %w", ctx.ErrSyntax, err)
	var syn *json.SyntaxError
	if errors.As(err, &syn) {
		off := min(max(int(syn.Offset), 0), len(data))
		e.Line = bytes.Count(data[:off], []byte("\n")) + 1
	}
	return e
}

// joinPath renders a key path for messages.
func joinPath(path []string) string { return strings.Join(path, ".") }

// isPath reports whether a source names a file.
func isPath(name string) bool {
	if strings.ContainsAny(name, `/\`) {
		return true
	}
	ext := strings.ToLower(filepath.Ext(name))
	return ext == ".yaml" || ext == ".yml" || ext == ".json" || ext == ".toml"
}
