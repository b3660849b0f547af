package sysprompt

import (
	"fmt"
	"strings"
)

// segment is a piece of a parsed template: literal text, or (name != "") a variable reference.
type segment struct {
	lit  string
	name string
}

// parseTemplate splits src into literals and {{name}} references. \{{ is a literal {{ and \\{{
// a backslash followed by a reference. A {{ without a closing }} or with an invalid name inside
// is an error wrapping ErrTemplate that gives its byte offset.
func parseTemplate(src string) ([]segment, error) {
	if !strings.Contains(src, "{{") {
		if src == "" {
			return []segment{}, nil
		}
		return []segment{{lit: src}}, nil
	}
	var segs []segment
	lit := func(s string) {
		if s != "" {
			segs = append(segs, segment{lit: s})
		}
	}
	start := 0
	for i := 0; i < len(src); {
		rest := src[i:]
		switch {
		case strings.HasPrefix(rest, `\\{{`):
			lit(src[start : i+1]) // keep one backslash; the {{ that follows is a reference
			i += 2
			start = i
		case strings.HasPrefix(rest, `\{{`):
			lit(src[start:i]) // drop the backslash; the {{ stays literal text
			start = i + 1
			i += 3
		case strings.HasPrefix(rest, "{{"):
			lit(src[start:i])
			end := strings.Index(rest[2:], "}}")
			if end < 0 {
				return nil, fmt.Errorf("%w: %q at byte %d is not closed by }} (write \\{{ for a literal {{)", ErrTemplate, "{{", i)
			}
			name := strings.TrimSpace(rest[2 : 2+end])
			if !validVar(name) {
				return nil, fmt.Errorf("%w: reference %q at byte %d: a variable name is 1 to 128 letters, digits, '_', '.' or '-'", ErrTemplate, rest[:4+end], i)
			}
			segs = append(segs, segment{name: name})
			i += 4 + end
			start = i
		default:
			i++
		}
	}
	lit(src[start:])
	return segs, nil
}

func hasRefs(segs []segment) bool {
	for _, sg := range segs {
		if sg.name != "" {
			return true
		}
	}
	return false
}

// validVar reports whether name matches [A-Za-z0-9_.-]{1,128}.
func validVar(name string) bool { return nameOf(name, "_.-") }

// missingVar reports a reference to a variable that is not set.
type missingVar struct{ name string }

func (e *missingVar) Error() string {
	return fmt.Sprintf("variable %q is not set (pass it in the assembly's vars)", e.name)
}

// Is makes errors.Is(err, ErrMissingVariable) hold.
func (e *missingVar) Is(target error) bool { return target == ErrMissingVariable }

// expand appends segs to buf with references replaced from vars. Values are inserted verbatim.
func expand(buf []byte, segs []segment, vars map[string]string) ([]byte, error) {
	for _, sg := range segs {
		if sg.name == "" {
			buf = append(buf, sg.lit...)
			continue
		}
		v, ok := vars[sg.name]
		if !ok {
			return buf, &missingVar{name: sg.name}
		}
		buf = append(buf, v...)
	}
	return buf, nil
}
