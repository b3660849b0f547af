package redact

import (
	"bytes"
	"encoding/json"
	"io"
	"strconv"
)

// JSON returns the JSON text s with the string values of secret-looking keys
// ([SecretName]: token, password, apiKey, …) masked as [Value] does, at any
// depth: the arguments of a tool call as an agent's transcript and a gateway's audit trail
// show them. Text without such values, and text that is not JSON, comes back unchanged,
// byte for byte: only the masked values' bytes are replaced.
func JSON(s string) string {
	if len(s) < 2 || !containsSecretKey(s) {
		return s
	}
	dec := json.NewDecoder(bytes.NewReader([]byte(s)))
	dec.UseNumber()
	type span struct {
		start, end int64
		repl       string
	}
	var spans []span
	// stack of containers: true for an object. In an object, expectKey alternates.
	type frame struct{ object, expectKey bool }
	var stack []frame
	var key string
	for {
		before := dec.InputOffset()
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return s
		}
		after := dec.InputOffset()
		top := len(stack) - 1
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{':
				if top >= 0 && stack[top].object {
					stack[top].expectKey = true
				}
				stack = append(stack, frame{object: true, expectKey: true})
			case '[':
				if top >= 0 && stack[top].object {
					stack[top].expectKey = true
				}
				stack = append(stack, frame{})
			default:
				stack = stack[:len(stack)-1]
			}
			continue
		case string:
			if top >= 0 && stack[top].object && stack[top].expectKey {
				key = t
				stack[top].expectKey = false
				continue
			}
			if top >= 0 && stack[top].object && SecretName(key) {
				if m := Value(t); m != t {
					// The token ends at after and starts at the first quote after before.
					q := bytes.IndexByte([]byte(s[before:after]), '"')
					spans = append(spans, span{start: before + int64(q), end: after, repl: strconv.Quote(m)})
				}
			}
		}
		if top >= 0 && stack[top].object {
			stack[top].expectKey = true
		}
	}
	if len(spans) == 0 {
		return s
	}
	var b bytes.Buffer
	last := int64(0)
	for _, sp := range spans {
		b.WriteString(s[last:sp.start])
		b.WriteString(sp.repl)
		last = sp.end
	}
	b.WriteString(s[last:])
	return b.String()
}

// containsSecretKey is a cheap pre-check: does any quoted word of s look like a secret's
// name? Most arguments have none, and then nothing is decoded.
func containsSecretKey(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] != '"' {
			continue
		}
		j := i + 1
		for j < len(s) && s[j] != '"' {
			if s[j] == '\\' {
				j++
			}
			j++
		}
		if j >= len(s) {
			return false
		}
		if SecretName(s[i+1 : j]) {
			return true
		}
		i = j
	}
	return false
}
