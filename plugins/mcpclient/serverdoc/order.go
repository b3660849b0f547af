package serverdoc

import (
	"bytes"
	"encoding/json"
	"maps"
	"regexp"
	"slices"
	"strings"

	yamlv3 "go.yaml.in/yaml/v3"
)

// documentOrder returns names (the keys of the servers map at path in data) in the order
// the document lists them; names it cannot place come last, sorted. JSON (read as YAML) and
// TOML table headers ([mcp_servers.NAME]) are placed; maps keep no order once parsed.
func documentOrder(data []byte, toml bool, path []string, names []string) []string {
	var listed []string
	switch {
	case toml:
		listed = tomlTableOrder(data, path)
	default:
		var ok bool
		if listed, ok = jsonKeyOrder(stripJSONC(data), path); !ok {
			listed = yamlKeyOrder(data, path)
		}
	}
	rest := map[string]bool{}
	for _, n := range names {
		rest[n] = true
	}
	out := make([]string, 0, len(names))
	for _, n := range listed {
		if rest[n] {
			out = append(out, n)
			delete(rest, n)
		}
	}
	return append(out, slices.Sorted(maps.Keys(rest))...)
}

// jsonKeyOrder returns the keys of the object at path in a JSON document, in order; ok is
// false when data is not JSON.
func jsonKeyOrder(data []byte, path []string) (keys []string, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(data))
	var walk func(depth int, collect bool) error
	walk = func(depth int, collect bool) error {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		d, isDelim := tok.(json.Delim)
		if !isDelim {
			return nil // a scalar
		}
		if d == '[' {
			for dec.More() {
				if err := walk(depth+1, false); err != nil {
					return err
				}
			}
			_, err = dec.Token()
			return err
		}
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return err
			}
			k, _ := kt.(string)
			if collect {
				keys = append(keys, k)
			}
			onPath := !collect && depth >= 0 && depth < len(path) && k == path[depth]
			next := -1
			if onPath {
				next = depth + 1
			}
			if err := walk(next, onPath && next == len(path)); err != nil {
				return err
			}
		}
		_, err = dec.Token()
		return err
	}
	if err := walk(0, len(path) == 0); err != nil {
		return nil, false
	}
	return keys, true
}

// yamlKeyOrder returns the keys of the mapping at path in a JSON or YAML document, in
// order, or nil.
func yamlKeyOrder(data []byte, path []string) []string {
	var doc yamlv3.Node
	if yamlv3.Unmarshal(data, &doc) != nil || len(doc.Content) == 0 {
		return nil
	}
	n := doc.Content[0]
	for _, key := range path {
		if n.Kind != yamlv3.MappingNode {
			return nil
		}
		var next *yamlv3.Node
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == key {
				next = n.Content[i+1]
			}
		}
		if next == nil {
			return nil
		}
		n = next
	}
	if n.Kind != yamlv3.MappingNode {
		return nil
	}
	var keys []string
	for i := 0; i+1 < len(n.Content); i += 2 {
		keys = append(keys, n.Content[i].Value)
	}
	return keys
}

// tomlHeader matches a TOML table header, capturing its dotted key.
var tomlHeader = regexp.MustCompile(`(?m)^\s*\[\s*([^\[\]]+?)\s*\]`)

// tomlTableOrder returns the names NAME of the tables [path.NAME] (and [path.NAME.sub]) of
// a TOML document, in the order their first header appears.
func tomlTableOrder(data []byte, path []string) []string {
	prefix := strings.Join(path, ".") + "."
	var out []string
	for _, m := range tomlHeader.FindAllSubmatch(data, -1) {
		key, ok := strings.CutPrefix(string(m[1]), prefix)
		if !ok {
			continue
		}
		name := key
		if strings.HasPrefix(key, `"`) {
			if end := strings.Index(key[1:], `"`); end >= 0 {
				name = key[1 : end+1]
			}
		} else if i := strings.IndexByte(key, '.'); i >= 0 {
			name = key[:i]
		}
		if !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	return out
}
