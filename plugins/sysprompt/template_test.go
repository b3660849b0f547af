package sysprompt

import (
	"errors"
	"strings"
	"testing"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/ctx/ctxtest"
)

func TestTemplate(t *testing.T) {
	vars := map[string]string{"x": "1", "y": "2", "a.b-c_d": "3"}
	tests := []struct {
		src, want string
		err       error
	}{
		{"", "", nil},
		{"plain text", "plain text", nil},
		{"{{x}}{{y}}", "12", nil},
		{"<{{ x }}>", "<1>", nil},
		{"{{\tx\n}}", "1", nil},
		{"{{a.b-c_d}}", "3", nil},
		{"{{x}}}", "1}", nil},
		{"}}{{x}}", "}}1", nil},
		{`\{{`, "{{", nil},
		{`a\{{x}}b`, "a{{x}}b", nil},
		{`\{{x}} {{x}}`, "{{x}} 1", nil},
		{`\\{{x}}`, `\1`, nil},
		{`a\b\`, `a\b\`, nil},
		{`\{x}}`, `\{x}}`, nil},
		{"{x}", "{x}", nil},
		{"{{", "", ErrTemplate},
		{"a {{x", "", ErrTemplate},
		{"{{x}", "", ErrTemplate},
		{"{{}}", "", ErrTemplate},
		{"{{{x}}}", "", ErrTemplate},
		{"{{x y}}", "", ErrTemplate},
		{"{{é}}", "", ErrTemplate},
		{"{{z}}", "", ErrMissingVariable},
	}
	for _, tt := range tests {
		t.Run(tt.src, func(t *testing.T) {
			segs, err := parseTemplate(tt.src)
			var out []byte
			if err == nil {
				out, err = expand(nil, segs, vars)
			}
			if tt.err != nil {
				if !errors.Is(err, tt.err) {
					t.Fatalf("err %v, want %v", err, tt.err)
				}
				return
			}
			if err != nil || string(out) != tt.want {
				t.Fatalf("got %q, %v; want %q", out, err, tt.want)
			}
		})
	}
}

func FuzzTemplate(f *testing.F) {
	for _, s := range []string{"", "{{x}}", `\{{x}}`, `\\{{x}}`, "{{ x }", "a}}b{{"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		segs, err := parseTemplate(src)
		if err != nil {
			if !errors.Is(err, ErrTemplate) {
				t.Fatalf("parse error %v does not wrap ErrTemplate", err)
			}
			return
		}
		// Every variable resolves to its own name in braces-free form; the literal text
		// never grows beyond the source.
		vars := map[string]string{}
		lit := 0
		for _, sg := range segs {
			if sg.name != "" {
				if !validVar(sg.name) {
					t.Fatalf("invalid name %q accepted", sg.name)
				}
				vars[sg.name] = ""
			} else {
				if sg.lit == "" {
					t.Fatal("empty literal segment")
				}
				lit += len(sg.lit)
			}
		}
		out, err := expand(nil, segs, vars)
		if err != nil || len(out) != lit || lit > len(src) {
			t.Fatalf("expand %q: %q, %v", src, out, err)
		}
		if !strings.Contains(src, "{{") && string(out) != src {
			t.Fatalf("text without references changed: %q -> %q", src, out)
		}
	})
}

// Removing every section leaves no layer or cached view behind, so disposed scopes are not
// retained.
func TestNoRetention(t *testing.T) {
	root := ctxtest.New(t)
	s := New(Config{})
	agent := ctxtest.MountActive(t, root, ctx.Define(ctx.Meta{Name: "agent"}, func(*ctx.Context, struct{}) error { return nil }), nil)
	if _, err := s.Register(agent.Context().Layered(), Section{Name: "a", Text: "A"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Register(root, Section{Name: "r", Text: "R"}); err != nil {
		t.Fatal(err)
	}
	if p, err := s.Assemble(agent.Context(), nil); err != nil || p.Text != "A\n\nR" {
		t.Fatalf("%v %v", p, err)
	}
	if err := agent.Dispose(ctxtest.Wait(t)); err != nil {
		t.Fatal(err)
	}
	if p, err := s.Assemble(root, nil); err != nil || p.Text != "R" {
		t.Fatalf("after the agent's unload: %v %v", p, err)
	}
	layer := s.sections.Nearest(agent) == agent
	cached := s.views.Len() != 1 // the one view is the root's
	if layer || cached {
		t.Fatalf("disposed scope retained: layer %v view %v", layer, cached)
	}
}
