package jsoncheck

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// schemaCheckSeeds are schema/instance pairs; the schemas are shapes real MCP servers
// advertise (go-sdk inferred schemas, zod-to-json-schema output, hand-written ones).
var schemaCheckSeeds = [][2]string{
	{`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`, `{"text":"hello"}`},
	{`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`, `{"text":1}`},
	{`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`, `{}`},
	{`{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"],"additionalProperties":false,"$schema":"http://json-schema.org/draft-07/schema#"}`, `{"a":1,"b":2.5}`},
	{`{"type":"object","properties":{"a":{"type":"number"}},"additionalProperties":false}`, `{"a":1,"c":2}`},
	{`{"type":"object","properties":{"n":{"type":"integer","minimum":1,"maximum":10}}}`, `{"n":10}`},
	{`{"type":"object","properties":{"n":{"type":"integer","exclusiveMinimum":1,"multipleOf":2}}}`, `{"n":2.0}`},
	{`{"type":"object","properties":{"n":{"type":"integer"}}}`, `{"n":2.5}`},
	{`{"type":"object","properties":{"s":{"type":"string","minLength":2,"maxLength":3,"pattern":"^[a-zé]+$"}}}`, `{"s":"éé"}`},
	{`{"type":"object","properties":{"s":{"type":"string","enum":["a","b"]}}}`, `{"s":"c"}`},
	{`{"type":"object","properties":{"s":{"const":"x"}}}`, `{"s":"x"}`},
	{`{"type":"object","properties":{"l":{"type":"array","items":{"type":"string"},"minItems":1,"maxItems":2}}}`, `{"l":["a","b","c"]}`},
	{`{"type":"object","properties":{"o":{"type":"object","additionalProperties":{"type":"boolean"}}}}`, `{"o":{"x":true,"y":null}}`},
	{`{"type":"object","properties":{"v":{"type":["string","null"]}}}`, `{"v":null}`},
	{`{"type":"object","properties":{"v":{"anyOf":[{"type":"string"},{"type":"null"}]}}}`, `{"v":1}`},
	{`{"type":"object","properties":{"v":{"$ref":"#/$defs/x"}},"$defs":{"x":{"type":"string"}}}`, `{"v":"a"}`},
	{`{"type":"object","properties":{"v":{"type":"string","format":"uri","description":"d","default":"x"}}}`, `{"v":"not a uri"}`},
	{`{"type":"object","properties":{"e":{"enum":[1,"1",true,null]}}}`, `{"e":1.0}`},
	{`{"type":"object","properties":{"e":{"enum":[[1],{"a":1}]}}}`, `{"e":[1]}`},
	{`{"type":"object","additionalProperties":{"not":{}}}`, `{"a":1}`},
	{`{"type":"object","properties":{"s":{"enum":["a\"b"]}}}`, `{"s":"a\"b"}`},
	{`{"type":"object","properties":{"n":{"type":"integer","maximum":3}}}`, `{"n":3,"n":4}`},
	{`{"type":"object","properties":{"n":{"type":"integer","maximum":3}}}`, `{"n":4,"n":3}`},
	{`{"type":"object","properties":{"n":{"type":"number","minimum":-1}}}`, `{"n":-0,"m":[1e400]}`},
	{`{"type":"object","required":["a"]}`, ` {"a":{"b":[null,true,"\u00e9"]}} `},
}

// FuzzSchemaCheck checks that the fast checker, wherever it is built, accepts exactly the
// instances jsonschema-go accepts.
func FuzzSchemaCheck(f *testing.F) {
	for _, p := range schemaCheckSeeds {
		f.Add([]byte(p[0]), []byte(p[1]))
	}
	f.Fuzz(func(t *testing.T, rawSchema, rawInstance []byte) {
		s, _, err := Compile(rawSchema)
		if err != nil {
			return
		}
		var v any
		if json.Unmarshal(rawInstance, &v) != nil {
			if s.acceptsRaw(rawInstance) {
				t.Fatalf("schema %s: the scan accepts invalid JSON %q", rawSchema, rawInstance)
			}
			return
		}
		valid := checkAgreement(t, s, rawSchema, v)
		if s.acceptsRaw(rawInstance) && !valid {
			t.Fatalf("schema %s: the scan accepts %q, which jsonschema-go rejects", rawSchema, rawInstance)
		}
	})
}

// checkAgreement compares the two validators on v and returns the verdict.
func checkAgreement(t *testing.T, s *Schema, rawSchema []byte, v any) bool {
	t.Helper()
	slow := s.Resolved().Validate(v)
	if s.fast == nil {
		return slow == nil
	}
	if fast := s.fast.accepts(v); fast != (slow == nil) {
		t.Fatalf("schema %s, instance %#v: fast checker says %v, jsonschema-go says %v", rawSchema, v, fast, slow)
	}
	return slow == nil
}

func TestSchemaCheckSeeds(t *testing.T) {
	built := 0
	for _, p := range schemaCheckSeeds {
		s, _, err := Compile([]byte(p[0]))
		if err != nil {
			t.Fatalf("Compile(%s): %v", p[0], err)
		}
		if s.fast != nil {
			built++
			if s.rs != nil {
				t.Errorf("schema %s: the resolved form is kept next to the fast checker", p[0])
			}
		} else if s.rs == nil {
			t.Errorf("schema %s: no fast checker and no resolved form", p[0])
		}
		var v any
		if err := json.Unmarshal([]byte(p[1]), &v); err != nil {
			if s.acceptsRaw([]byte(p[1])) {
				t.Errorf("schema %s: the scan accepts invalid JSON %s", p[0], p[1])
			}
			continue
		}
		if valid := checkAgreement(t, s, []byte(p[0]), v); s.acceptsRaw([]byte(p[1])) && !valid {
			t.Errorf("schema %s: the scan accepts %s, which jsonschema-go rejects", p[0], p[1])
		}
		// Validate, the entry point, gives jsonschema-go's verdict and message either way.
		if got, want := errString(s.Validate(v)), errString(s.Resolved().Validate(v)); got != want {
			t.Errorf("schema %s, instance %s: Validate = %q, jsonschema-go = %q", p[0], p[1], got, want)
		}
	}
	// Everything but anyOf, $ref and enums of arrays and objects is in the subset
	// (additionalProperties {"not":{}} is how jsonschema-go reads false).
	if want := len(schemaCheckSeeds) - 3; built != want {
		t.Errorf("fast checker built for %d of the seed schemas, want %d", built, want)
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestSchemaCheckRandom compares the two validators on random schemas of the subset and
// random instances made to sit near the schemas' edges.
func TestSchemaCheckRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	valid, invalid := 0, 0
	n := 3000
	if testing.Short() {
		n = 300
	}
	for range n {
		sch := randSchema(r, 0)
		raw, err := json.Marshal(sch)
		if err != nil {
			t.Fatal(err)
		}
		s, _, err := Compile(raw)
		if err != nil {
			continue // e.g. a pattern the resolver rejects
		}
		if s.fast == nil {
			t.Fatalf("no fast checker for a schema of the subset: %s", raw)
		}
		for range 8 {
			v := randValue(r, sch, 0)
			ok := checkAgreement(t, s, raw, v)
			if ok {
				valid++
			} else {
				invalid++
			}
			// The scan of the JSON text agrees too: the random values have no escapes and
			// no duplicate keys, so it never needs to decline.
			text, _ := json.Marshal(v)
			if r.IntN(2) == 0 {
				text, _ = json.MarshalIndent(v, " ", "\t")
			}
			if got := s.acceptsRaw(text); got != ok {
				t.Fatalf("schema %s, instance %s: the scan says %v, jsonschema-go %v", raw, text, got, ok)
			}
		}
	}
	// Both verdicts must be common, or the comparison proves little.
	if valid < n || invalid < n {
		t.Errorf("%d valid and %d invalid instances of %d; want at least %d of each", valid, invalid, 8*n, n)
	}
}

var randTypes = []string{"null", "boolean", "integer", "number", "string", "array", "object"}

func randSchema(r *rand.Rand, depth int) map[string]any {
	s := map[string]any{}
	switch r.IntN(5) {
	case 0:
	case 1:
		s["type"] = []string{randTypes[r.IntN(7)], randTypes[r.IntN(7)]}
	default:
		s["type"] = randTypes[r.IntN(7)]
	}
	if depth == 0 {
		s["type"] = "object"
	}
	if r.IntN(6) == 0 {
		s["enum"] = []any{"a", 1.0, 2.5, true, nil, "bb"}[:1+r.IntN(6)]
	}
	if r.IntN(10) == 0 {
		s["const"] = []any{"a", 1.0, false, nil}[r.IntN(4)]
	}
	if r.IntN(3) == 0 {
		s["minLength"] = r.IntN(3)
	}
	if r.IntN(3) == 0 {
		s["maxLength"] = r.IntN(4)
	}
	if r.IntN(5) == 0 {
		s["pattern"] = []string{"^a", "b$", "^[a-c]*$", "é"}[r.IntN(4)]
	}
	for _, k := range []string{"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"} {
		if r.IntN(4) == 0 {
			s[k] = float64(r.IntN(7)-3) / 2
		}
	}
	if r.IntN(5) == 0 {
		s["multipleOf"] = []float64{0.5, 1, 2, 3}[r.IntN(4)]
	}
	if r.IntN(3) == 0 {
		s["minItems"] = r.IntN(3)
	}
	if r.IntN(3) == 0 {
		s["maxItems"] = r.IntN(3)
	}
	if depth < 3 {
		if r.IntN(2) == 0 {
			s["items"] = randSchema(r, depth+1)
		}
		if r.IntN(2) == 0 || depth == 0 {
			props := map[string]any{}
			for i := range r.IntN(4) {
				props[fmt.Sprint("p", i)] = randSchema(r, depth+1)
			}
			s["properties"] = props
		}
		switch r.IntN(4) {
		case 0:
			s["additionalProperties"] = false
		case 1:
			s["additionalProperties"] = randSchema(r, depth+1)
		case 2:
			s["additionalProperties"] = true
		}
	}
	if r.IntN(2) == 0 {
		s["required"] = []string{"p0", "p1", "x"}[:r.IntN(4)]
	}
	if r.IntN(4) == 0 {
		s["description"], s["title"], s["default"], s["format"] = "d", "t", 1, "uri"
	}
	return s
}

// randValue returns a value that often, but not always, fits sch.
func randValue(r *rand.Rand, sch map[string]any, depth int) any {
	if e, ok := sch["enum"].([]any); ok && r.IntN(2) == 0 {
		return e[r.IntN(len(e))]
	}
	if c, ok := sch["const"]; ok && r.IntN(2) == 0 {
		return c
	}
	t, _ := sch["type"].(string)
	if ts, ok := sch["type"].([]string); ok {
		t = ts[r.IntN(len(ts))]
	}
	if t == "" || r.IntN(8) == 0 {
		t = randTypes[r.IntN(7)]
	}
	switch t {
	case "null":
		return nil
	case "boolean":
		return r.IntN(2) == 0
	case "integer":
		return float64(r.IntN(9) - 4)
	case "number":
		return float64(r.IntN(13)-6) / 4
	case "string":
		return strings.Repeat([]string{"a", "b", "c", "é", "x"}[r.IntN(5)], r.IntN(5))
	case "array":
		items, _ := sch["items"].(map[string]any)
		out := []any{}
		for range r.IntN(4) {
			if items != nil && depth < 4 {
				out = append(out, randValue(r, items, depth+1))
			} else {
				out = append(out, float64(r.IntN(3)))
			}
		}
		return out
	}
	out := map[string]any{}
	props, _ := sch["properties"].(map[string]any)
	for name, ps := range props {
		if r.IntN(4) != 0 && depth < 4 {
			out[name] = randValue(r, ps.(map[string]any), depth+1)
		}
	}
	if r.IntN(3) == 0 {
		if ap, ok := sch["additionalProperties"].(map[string]any); ok && depth < 4 {
			out["extra"] = randValue(r, ap, depth+1)
		} else {
			out["extra"] = "e"
		}
	}
	return out
}
