package mcpresources

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"

	"github.com/cordisgo/harness/internal/jsonstr"
)

// modelText renders a provider's result for the model: a header naming the server, then the
// result as compact JSON (members in their original order) in which the value of every
// member named "blob" that is a string is replaced by a description of the binary data. The
// canonical result itself is never changed.
func modelText(server string, raw json.RawMessage) (string, error) {
	if !json.Valid(raw) {
		if len(bytes.TrimSpace(raw)) == 0 {
			return "", errors.New("empty result")
		}
		return "", errors.New("not valid JSON")
	}
	p := projector{in: raw, out: make([]byte, 0, len("MCP server: \n")+len(server)+len(raw))}
	p.out = append(append(append(p.out, "MCP server: "...), server...), '\n')
	p.value() // valid JSON: the projector need not check its input
	return string(p.out), nil
}

// projector copies a valid JSON value in one pass, dropping white space and describing
// blobs. Strings, numbers and literals are copied byte for byte.
type projector struct {
	in  []byte
	i   int
	out []byte
}

// space skips JSON whitespace.
func (p *projector) space() { p.i = jsonstr.Space(p.in, p.i) }

// stringEnd returns the index just past the string starting at p.i, and whether it holds
// escapes.
func (p *projector) stringEnd() (end int, escaped bool) {
	for j := p.i + 1; ; j++ {
		switch p.in[j] {
		case '\\':
			j++
			escaped = true
		case '"':
			return j + 1, escaped
		}
	}
}

func (p *projector) value() {
	p.space()
	switch p.in[p.i] {
	case '{':
		p.object()
	case '[':
		p.array()
	case '"':
		end, _ := p.stringEnd()
		p.out = append(p.out, p.in[p.i:end]...)
		p.i = end
	default: // number, true, false, null
		j := p.i
		for j < len(p.in) {
			c := p.in[j]
			if c == ',' || c == '}' || c == ']' || c == ' ' || c == '\t' || c == '\r' || c == '\n' {
				break
			}
			j++
		}
		p.out = append(p.out, p.in[p.i:j]...)
		p.i = j
	}
}

func (p *projector) array() {
	p.out = append(p.out, '[')
	p.i++
	for n := 0; ; n++ {
		p.space()
		switch p.in[p.i] {
		case ']':
			p.i++
			p.out = append(p.out, ']')
			return
		case ',':
			p.i++
		}
		if n > 0 {
			p.out = append(p.out, ',')
		}
		p.value()
	}
}

func (p *projector) object() {
	p.out = append(p.out, '{')
	p.i++
	var (
		mime    []byte // the raw body of this object's mimeType string, once seen
		pending []int  // where a blob description written before mimeType was seen ends
	)
	for n := 0; ; n++ {
		p.space()
		switch p.in[p.i] {
		case '}':
			p.i++
			// Insert the MIME type into descriptions written before it was known, last
			// first so the earlier offsets stay valid.
			if len(mime) > 0 {
				for k := len(pending) - 1; k >= 0; k-- {
					at := pending[k]
					ins := append([]byte(", "), mime...)
					p.out = append(p.out[:at], append(ins, p.out[at:]...)...)
				}
			}
			p.out = append(p.out, '}')
			return
		case ',':
			p.i++
			p.space()
		}
		if n > 0 {
			p.out = append(p.out, ',')
		}
		kend, _ := p.stringEnd()
		key := p.in[p.i:kend]
		p.out = append(p.out, key...)
		p.i = kend
		p.space()
		p.i++ // :
		p.out = append(p.out, ':')
		p.space()
		if p.in[p.i] != '"' {
			p.value()
			continue
		}
		end, escaped := p.stringEnd()
		body := p.in[p.i+1 : end-1]
		switch string(key) {
		case `"blob"`:
			p.out = append(p.out, `"[binary blob: `...)
			p.out = appendBlobSize(p.out, body, escaped)
			if len(mime) > 0 {
				p.out = append(append(p.out, ", "...), mime...)
			} else {
				pending = append(pending, len(p.out))
			}
			p.out = append(p.out, `]"`...)
		case `"mimeType"`:
			mime = body
			p.out = append(p.out, p.in[p.i:end]...)
		default:
			p.out = append(p.out, p.in[p.i:end]...)
		}
		p.i = end
	}
}

// appendBlobSize appends the decoded size of a base64 string body (raw JSON string content):
// "1234 bytes", or "not valid base64, N characters".
func appendBlobSize(out, body []byte, escaped bool) []byte {
	if escaped {
		var s string
		if err := json.Unmarshal(append(append([]byte{'"'}, body...), '"'), &s); err == nil {
			body = []byte(s)
		}
	}
	if n, ok := base64Size(body); ok {
		return append(strconv.AppendInt(out, int64(n), 10), " bytes"...)
	}
	out = append(out, "not valid base64, "...)
	return append(strconv.AppendInt(out, int64(len(body)), 10), " characters"...)
}

// base64Size returns the number of bytes that s, standard or URL-safe base64 with or without
// padding (white space ignored), decodes to. ok is false when s is not base64.
func base64Size(s []byte) (n int, ok bool) {
	chars, pad := 0, 0
	for _, c := range s {
		switch {
		case 'A' <= c && c <= 'Z', 'a' <= c && c <= 'z', '0' <= c && c <= '9',
			c == '+', c == '/', c == '-', c == '_':
			if pad > 0 {
				return 0, false
			}
			chars++
		case c == '=':
			pad++
		case c == ' ', c == '\t', c == '\r', c == '\n':
		default:
			return 0, false
		}
	}
	if pad > 2 || chars%4 == 1 || (pad > 0 && (chars+pad)%4 != 0) {
		return 0, false
	}
	return chars * 6 / 8, true
}
