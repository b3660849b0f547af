package ctx_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"

	"github.com/cordisgo/harness/ctx"
)

type fuzzConfig struct {
	Name    string             `json:"name"`
	Count   int                `json:"count"`
	Ratio   float64            `json:"ratio"`
	On      bool               `json:"on"`
	Tags    []string           `json:"tags"`
	Env     map[string]string  `json:"env"`
	Sub     struct{ Port int } `json:"sub"`
	Maybe   *[]int             `json:"maybe"`
	Small   uint8              `json:"small"`
	Anythin any                `json:"anything"`
}

// FuzzDecode decodes arbitrary bytes strictly. No input panics; a refusal is one or more
// *ctx.ConfigError values; an accepted document (other than an empty one, which leaves the
// defaults) is one encoding/json also accepts with unknown fields disallowed, giving the
// same value.
func FuzzDecode(f *testing.F) {
	for _, seed := range []string{
		`{}`, `null`, `{"name":"a","count":1,"tags":["x"],"env":{"K":"v"},"sub":{"Port":2}}`,
		`{"Name":"a"}`, `{"count":"1"}`, `{"count":1.5}`, `{"small":300}`, `{"tags":[1]}`, `[1]`, `{"maybe":[1,2]}`,
		`{"count":99999999999999999999}`, `{"anything":{"x":[1]}}`, `{"sub":{"port":1}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var got fuzzConfig
		err := ctx.DecodeInto(data, &got)
		var want fuzzConfig
		stdErr := strictJSON(data, &want)
		if err != nil {
			for _, p := range ctx.ConfigErrors(err) {
				if !errors.Is(p, ctx.ErrInvalidConfig) {
					t.Fatalf("%q: a problem that is not a ConfigError: %v", data, p)
				}
			}
			return
		}
		if t := bytes.TrimSpace(data); len(t) == 0 || string(t) == "null" {
			return // no configuration: the defaults stay
		}
		if stdErr != nil {
			t.Fatalf("%q: accepted, but encoding/json refuses it: %v", data, stdErr)
		}
		a, _ := json.Marshal(got)
		b, _ := json.Marshal(want)
		if string(a) != string(b) {
			t.Fatalf("%q: decoded %s, encoding/json %s", data, a, b)
		}
	})
}

func strictJSON(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("data after the value")
	}
	return nil
}
