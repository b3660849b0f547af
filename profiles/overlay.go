package profiles

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/knadh/koanf/providers/env/v2"

	"github.com/cordisgo/harness/internal/yamlnode"
)

// applySet layers one --set KEY=VALUE overlay.
func (l *loader) applySet(arg string) error {
	key, val, ok := strings.Cut(arg, "=")
	if !ok {
		return l.fail(&layer{label: "--set " + arg}, nil, ErrSyntax,
			"expected KEY=VALUE, e.g. plugins.demo.enabled=false", nil)
	}
	ly := &layer{label: "--set " + key, desc: "--set " + key}
	if !utf8.ValidString(arg) {
		return l.fail(&layer{label: "--set " + strconv.Quote(key)}, nil, ErrSyntax, "not valid UTF-8", nil)
	}
	if key == "" {
		return l.fail(ly, nil, ErrSyntax, "empty key: expected KEY=VALUE, e.g. plugins.demo.enabled=false", nil)
	}
	path := strings.Split(key, ".")
	if slices.Contains(path, "") {
		return l.fail(ly, nil, ErrSyntax,
			fmt.Sprintf("empty segment in key %q: expected a dotted key path, e.g. plugins.demo.config.url", key), nil)
	}
	v, err := parseValue(val)
	if err != nil {
		msg := strings.TrimPrefix(err.Error(), "yaml: ")
		return l.fail(ly, path, ErrSyntax, "value is not valid YAML: "+msg+" (quote it to pass a string)", err)
	}
	if err := l.checkPath(ly, path, l.k.Raw()); err != nil {
		return err
	}
	return l.overlay(ly, path, v)
}

// overlay merges value v at path as the layer ly.
func (l *loader) overlay(ly *layer, path []string, v any) error {
	if path[0] == "extends" {
		return l.fail(ly, path, ErrInvalid, "extends can only be written in a profile file", nil)
	}
	ly.tree = nest(path, v)
	for n := 1; n <= len(path); n++ {
		l.note(path[:n])
	}
	l.noteTree(path, v)
	return l.load(ly, ly.tree)
}

// nest builds {path[0]: {path[1]: … v}}.
func nest(path []string, v any) map[string]any {
	for i := len(path) - 1; i > 0; i-- {
		v = map[string]any{path[i]: v}
	}
	return map[string]any{path[0]: v}
}

// checkPath refuses an overlay that would write below a value that is not
// a map: it would silently replace a string or a list with a map.
func (l *loader) checkPath(ly *layer, path []string, cur map[string]any) error {
	var v any = cur
	for i, seg := range path[:len(path)-1] {
		m, ok := v.(map[string]any)
		if !ok {
			return l.notAMap(ly, path, path[:i], v)
		}
		if v, ok = m[seg]; !ok || v == nil {
			return nil
		}
	}
	if _, ok := v.(map[string]any); !ok {
		return l.notAMap(ly, path, path[:len(path)-1], v)
	}
	return nil
}

func (l *loader) notAMap(ly *layer, path, at []string, v any) *Error {
	msg := fmt.Sprintf("cannot set a key inside %q, which holds %s, not a map", joinPath(at), yamlnode.Value(v))
	if _, ok := v.([]any); ok {
		msg += fmt.Sprintf("; a list is replaced whole, e.g. %s=[a, b]", joinPath(at))
	}
	return l.fail(ly, path, ErrInvalid, msg, nil)
}

// envVar is one HARNESS_* overlay, resolved against the merged profile.
type envVar struct {
	name  string
	path  []string
	value any
}

// applyEnv layers the HARNESS_* environment variables. A variable is an
// overlay when its name, after the prefix, holds the "__" separator;
// other HARNESS_* variables belong to the binary and are ignored. koanf's
// env provider reads and merges them; its transform resolves each name
// against the merged profile (case-insensitive keys, typed values).
func (l *loader) applyEnv() error {
	environ := slices.Clone(l.opts.Environ)
	slices.Sort(environ)
	cur := l.k.Raw()
	var (
		vars   []envVar
		failed error
	)
	p := env.Provider(".", env.Opt{
		Prefix:      EnvPrefix,
		EnvironFunc: func() []string { return environ },
		TransformFunc: func(name, raw string) (string, any) {
			if failed != nil || !strings.Contains(name[len(EnvPrefix):], "__") {
				return "", nil
			}
			ev, err := l.resolveEnv(cur, name, raw, vars)
			if err == nil && ev.path[0] == "extends" {
				err = l.fail(&layer{label: "$" + name}, ev.path, ErrInvalid,
					"extends can only be written in a profile file", nil)
			}
			if err != nil {
				failed = err
				return "", nil
			}
			pruneNulls(nest(ev.path, ev.value))
			vars = append(vars, ev)
			return strings.Join(ev.path, "."), ev.value
		},
	})
	if err := l.k.Load(p, nil); err != nil {
		return l.fail(nil, nil, ErrInvalid, "cannot read the environment: "+err.Error(), err)
	}
	if failed != nil {
		return failed
	}
	for _, ev := range vars {
		l.layers = append(l.layers, &layer{label: "$" + ev.name, desc: "$" + ev.name, tree: nest(ev.path, ev.value)})
		for n := 1; n <= len(ev.path); n++ {
			l.note(ev.path[:n])
		}
		l.noteTree(ev.path, ev.value)
	}
	return nil
}

// resolveEnv maps HARNESS_A__B__C to a key path: each segment matches an
// existing key exactly, else case-insensitively with '-' and '_' taken as
// equal; a segment that matches nothing names a new key, in lower case
// (below an env map: as written, since variable names are case-sensitive).
func (l *loader) resolveEnv(cur map[string]any, name, raw string, prev []envVar) (envVar, error) {
	ly := &layer{label: "$" + name}
	if !utf8.ValidString(name) || !utf8.ValidString(raw) {
		ly.label = "$" + strconv.Quote(name)
		return envVar{}, l.fail(ly, nil, ErrSyntax, "not valid UTF-8", nil)
	}
	segs := strings.Split(name[len(EnvPrefix):], "__")
	if slices.Contains(segs, "") {
		return envVar{}, l.fail(ly, nil, ErrSyntax,
			"empty key segment: expected HARNESS_KEY__KEY…, e.g. HARNESS_PLUGINS__DEMO__ENABLED", nil)
	}
	var (
		v     any = cur
		path      = make([]string, 0, len(segs))
		exist     = true
	)
	for i, seg := range segs {
		m, isMap := v.(map[string]any)
		if exist && v != nil && !isMap {
			return envVar{}, l.notAMap(ly, append(path, segs[i:]...), path, v)
		}
		key, found, err := matchKey(m, seg)
		if err != nil {
			return envVar{}, l.fail(ly, append(path, seg), ErrInvalid, err.Error(), nil)
		}
		if !found {
			key = strings.ToLower(seg)
			if i > 0 && path[i-1] == "env" {
				key = seg
			}
		}
		if strings.Contains(key, ".") {
			return envVar{}, l.fail(ly, append(path, key), ErrInvalid,
				"a key holding '.' cannot be set from the environment; use --set or the profile", nil)
		}
		path = append(path, key)
		v, exist = m[key]
	}
	for _, p := range prev {
		if isPrefix(p.path, path) || isPrefix(path, p.path) {
			return envVar{}, l.fail(ly, path, ErrDuplicate,
				fmt.Sprintf("also set by $%s: expected one variable per key", p.name), nil)
		}
	}
	return envVar{name: name, path: path, value: envValue(v, path, raw)}, nil
}

// matchKey finds the key of m that seg names.
func matchKey(m map[string]any, seg string) (string, bool, error) {
	if _, ok := m[seg]; ok {
		return seg, true, nil
	}
	fold := foldEnv(seg)
	var hits []string
	for k := range m {
		if foldEnv(k) == fold {
			hits = append(hits, k)
		}
	}
	switch len(hits) {
	case 0:
		return "", false, nil
	case 1:
		return hits[0], true, nil
	}
	slices.Sort(hits)
	return "", false, fmt.Errorf("%q matches keys %q: expected one", seg, hits)
}

func foldEnv(s string) string { return strings.ReplaceAll(strings.ToLower(s), "-", "_") }

func isPrefix(p, of []string) bool { return len(p) <= len(of) && slices.Equal(p, of[:len(p)]) }

// envValue types a variable's text by the value it replaces: booleans and
// numbers are parsed when they replace a boolean or a number (or a row's
// enabled), lists and maps are parsed as YAML when they replace a list or
// a map; everything else stays the string it is, so that a token such as
// 0123 is not read as a number.
func envValue(old any, path []string, raw string) any {
	switch old.(type) {
	case bool:
		if b, err := strconv.ParseBool(raw); err == nil {
			return b
		}
	case int, int64, uint64:
		if i, err := strconv.ParseInt(raw, 10, 64); err == nil {
			return int(i)
		}
	case float64:
		if f, err := strconv.ParseFloat(raw, 64); err == nil {
			return f
		}
	case []any, map[string]any:
		if v, err := parseValue(raw); err == nil {
			switch v.(type) {
			case []any, map[string]any:
				return v
			}
		}
	case nil:
		if isRowKey(path, "enabled") {
			if b, err := strconv.ParseBool(raw); err == nil {
				return b
			}
		}
	}
	return raw
}

// isRowKey reports whether path is plugins.ID(.plugins.ID)*.key.
func isRowKey(path []string, key string) bool {
	for len(path) >= 3 && path[0] == "plugins" {
		if len(path) == 3 {
			return path[2] == key
		}
		path = path[2:]
	}
	return false
}
