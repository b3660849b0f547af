package yamlnode

import (
	"errors"
	"regexp"
	"strconv"
	"strings"

	goccy "github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/parser"
)

// yamlLine is the position yaml.v3 puts before a syntax error's description.
var yamlLine = regexp.MustCompile(`^line (\d+): `)

// SyntaxError locates a YAML syntax error that yaml.v3 returned for data: the line that is
// broken (0 when unknown) and the description without the position or any text it quotes.
//
// yaml.v3 reports the line where the construct around the problem starts (a block
// mapping, a flow sequence), often lines above the one that is broken, and for the
// parser's errors counts that line from 0. A flow mapping or sequence that is not closed
// ("did not find expected ',' or '}'") is the broken line itself: its line is corrected by
// one. Otherwise the document is parsed again with goccy/go-yaml, whose errors carry the
// token at which parsing stopped, and the later of the two lines is taken: both are at or
// before the point where the document stops being YAML, so the later one is the nearer.
func SyntaxError(data []byte, err error) (line int, text string) {
	text = ErrorText(err)
	text = strings.TrimPrefix(text, "unmarshal errors:\n  ")
	m := yamlLine.FindStringSubmatch(text)
	if m == nil {
		return 0, text
	}
	line, _ = strconv.Atoi(m[1])
	text = text[len(m[0]):]
	if strings.HasPrefix(text, "did not find expected ',' or ") {
		return line + 1, text
	}
	if l := goccyLine(data); l > line {
		line = l
	}
	return line, text
}

// goccyLine returns the line goccy/go-yaml's parser stops at in data, or 0 when it parses
// data or gives no position.
func goccyLine(data []byte) (line int) {
	defer func() {
		if recover() != nil {
			line = 0
		}
	}()
	_, err := parser.ParseBytes(data, 0)
	if se, ok := errors.AsType[*goccy.SyntaxError](err); ok && se.Token != nil && se.Token.Position != nil {
		return se.Token.Position.Line
	}
	return 0
}
