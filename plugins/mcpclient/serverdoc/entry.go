package serverdoc

import (
	"encoding/json"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/cordisgo/harness/internal/yamlnode"
	"github.com/cordisgo/harness/plugins/mcpclient"
)

// EntryNode renders cfg as a settings file's entry, the way a person writes one: the keys
// whose values differ from the defaults of [mcpclient.Config.Default] (serverName left
// out: the key under servers names the server), in the order of mcpclient.Config's fields,
// lists of strings in flow style, and enabled: false first for a disabled entry. Start cfg
// from Default: a field left at its zero value where the default is not zero is written.
func EntryNode(cfg mcpclient.Config, enabled bool) *yaml.Node {
	cfg.ServerName = ""
	out := render(cfg)
	if !enabled {
		out.Content = append([]*yaml.Node{yamlnode.Str("enabled"), {Kind: yaml.ScalarNode, Tag: "!!bool", Value: "false"}}, out.Content...)
	}
	return out
}

// render renders the keys of cfg that differ from the defaults.
func render(cfg mcpclient.Config) *yaml.Node {
	var def mcpclient.Config
	def.Default()
	out := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	diff(out, jsonValue(cfg), jsonValue(def), configKeys(reflect.TypeFor[mcpclient.Config]()))
	return out
}

// ConfigKeys returns the keys of cfg that differ from the defaults, as [EntryNode] renders
// them, as plain values (strings, numbers, booleans, lists and maps of them): a profile
// row's config. ServerName is included when set.
func ConfigKeys(cfg mcpclient.Config) map[string]any {
	n := render(cfg)
	var out map[string]any
	_ = n.Decode(&out) // a node made of JSON values always decodes
	return out
}

// configKeys lists the JSON keys of a struct type's fields, in field order.
func configKeys(t reflect.Type) []string {
	var out []string
	for f := range t.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name != "" && name != "-" && f.IsExported() {
			out = append(out, name)
		}
	}
	return out
}

// jsonValue is v as encoding/json renders it, decoded into maps, lists and scalars.
func jsonValue(v any) map[string]any {
	b, _ := json.Marshal(v) // a configuration always encodes
	var out map[string]any
	_ = json.Unmarshal(b, &out)
	return out
}

// diff appends to m the keys of v (in order, then any others sorted) whose values differ
// from def's; nested objects keep only their differing keys.
func diff(m *yaml.Node, v, def map[string]any, order []string) {
	keys := slices.Clone(order)
	var rest []string
	for k := range v {
		if !slices.Contains(keys, k) {
			rest = append(rest, k)
		}
	}
	slices.Sort(rest)
	for _, k := range append(keys, rest...) {
		val, ok := v[k]
		if !ok || reflect.DeepEqual(val, def[k]) {
			continue
		}
		if obj, isObj := val.(map[string]any); isObj {
			if d, defObj := def[k].(map[string]any); defObj {
				sub := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
				diff(sub, obj, d, nil)
				m.Content = append(m.Content, yamlnode.Str(k), sub)
				continue
			}
		}
		m.Content = append(m.Content, yamlnode.Str(k), valueNode(val))
	}
}

// valueNode renders a decoded JSON value.
func valueNode(v any) *yaml.Node {
	switch v := v.(type) {
	case map[string]any:
		n := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			n.Content = append(n.Content, yamlnode.Str(k), valueNode(v[k]))
		}
		if len(keys) == 0 {
			n.Style = yaml.FlowStyle
		}
		return n
	case []any:
		n := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Style: yaml.FlowStyle}
		for _, e := range v {
			n.Content = append(n.Content, valueNode(e))
		}
		return n
	case string:
		return yamlnode.Str(v)
	case bool:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: strconv.FormatBool(v)}
	case float64:
		if v == float64(int64(v)) {
			return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.FormatInt(int64(v), 10)}
		}
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!float", Value: strconv.FormatFloat(v, 'g', -1, 64)}
	}
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "null"}
}

// Patch returns a copy of raw (a profile row's configuration, as written) with the change
// from before to after applied: the top-level keys whose rendering ([ConfigKeys]) differs
// are set to after's, and a key after leaves at its default is dropped; every other key
// stays as written. It lets code change a row's configuration through the typed
// [mcpclient.Config] without spelling its keys.
func Patch(raw map[string]any, before, after mcpclient.Config) map[string]any {
	kb, ka := ConfigKeys(before), ConfigKeys(after)
	out := maps.Clone(raw)
	if out == nil {
		out = map[string]any{}
	}
	for k, v := range ka {
		if !reflect.DeepEqual(v, kb[k]) {
			out[k] = v
		}
	}
	for k := range kb {
		if _, ok := ka[k]; !ok {
			delete(out, k)
		}
	}
	return out
}
