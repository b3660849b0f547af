package hostview

import (
	"bytes"
	"encoding/json"
	"io"
)

// JSON is json.Marshal (json.MarshalIndent with a non-empty indent) without HTML
// escaping: <, > and & are printed as they are, also inside JSON that v embeds
// (json.RawMessage from a host's answer or a server's result, escaped by whoever encoded
// it). Everything the CLI prints as JSON, and the JSON settings files it writes, go
// through it.
func JSON(v any, indent string) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", indent)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return unescapeHTML(bytes.TrimSuffix(b.Bytes(), []byte("\n"))), nil
}

// unescapeHTML replaces the escapes \u003c, \u003e and \u0026 of valid JSON by the
// characters they stand for (an escaped backslash followed by "u003c" stays as it is).
func unescapeHTML(b []byte) []byte {
	if !bytes.Contains(b, []byte(`\u00`)) {
		return b
	}
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		if b[i] != '\\' || i+1 >= len(b) {
			out = append(out, b[i])
			continue
		}
		if b[i+1] == 'u' && i+6 <= len(b) {
			switch string(bytes.ToLower(b[i+2 : i+6])) {
			case "003c":
				out, i = append(out, '<'), i+5
				continue
			case "003e":
				out, i = append(out, '>'), i+5
				continue
			case "0026":
				out, i = append(out, '&'), i+5
				continue
			}
		}
		out = append(out, b[i], b[i+1]) // any other escape, \\ included, whole
		i++
	}
	return out
}

// JSONLines writes each of vs as one JSON line on w, as scripts stream them (a session's
// events, an audit trail's calls).
func JSONLines[T any](w io.Writer, vs []T) error {
	enc := json.NewEncoder(w)
	for _, v := range vs {
		if err := enc.Encode(v); err != nil {
			return err
		}
	}
	return nil
}
