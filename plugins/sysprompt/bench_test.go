package sysprompt_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/ctx/ctxtest"
	"github.com/cordisgo/harness/plugins/sysprompt"
)

// benchPrompt registers 200 sections of about 200 bytes: 150 in the root layer, 50 in an agent
// scope's layer, and returns the agent's context to assemble from. With mixed, one section in
// eight is interpolated and one in eight is rendered by a function.
func benchPrompt(b *testing.B, mixed bool) (*sysprompt.Service, *ctx.Context, []string) {
	root := ctxtest.New(b)
	svc := sysprompt.New(sysprompt.Config{})
	agent := ctxtest.MountActive(b, root, ctx.Define(ctx.Meta{Name: "agent"}, func(*ctx.Context, struct{}) error { return nil }), nil)
	texts := make([]string, 200)
	for i := range 200 {
		text := fmt.Sprintf("Section %03d. ", i) + strings.Repeat("lorem ipsum ", 16)
		sec := sysprompt.Section{Name: fmt.Sprintf("section-%03d", i), Order: (i * 7919) % 1000, Text: text}
		if mixed {
			switch i % 8 {
			case 1:
				sec.Text += "The user is {{user}}."
				sec.Interpolate = true
				text += "The user is Ada."
			case 2:
				sec.Text = ""
				sec.Render = func(*sysprompt.Assembly) (string, error) { return text, nil }
			}
		}
		texts[i] = text
		c := root
		if i >= 150 {
			c = agent.Context().Layered()
		}
		if _, err := svc.Register(c, sec); err != nil {
			b.Fatal(err)
		}
	}
	return svc, agent.Context(), texts
}

var sinkPrompt *sysprompt.Prompt

// BenchmarkAssemble200 assembles a prompt of 200 sections (about 40 KB) from an agent scope
// with two layers. static: every section is plain text; mixed: one in eight interpolated and one
// in eight rendered by a function; after-change: a section is registered and removed before
// every assembly, so the merged view is rebuilt each time; join: strings.Join of the same 200
// texts, the floor.
func BenchmarkAssemble200(b *testing.B) {
	vars := map[string]string{"user": "Ada"}
	for _, mixed := range []bool{false, true} {
		name := "static"
		if mixed {
			name = "mixed"
		}
		b.Run(name, func(b *testing.B) {
			svc, c, _ := benchPrompt(b, mixed)
			b.ReportAllocs()
			for b.Loop() {
				p, err := svc.Assemble(c, vars)
				if err != nil {
					b.Fatal(err)
				}
				sinkPrompt = p
			}
			b.ReportMetric(float64(len(sinkPrompt.Text)), "bytes/prompt")
		})
	}
	b.Run("after-change", func(b *testing.B) {
		svc, c, _ := benchPrompt(b, false)
		b.ReportAllocs()
		for b.Loop() {
			d, err := svc.Register(c, sysprompt.Section{Name: "extra", Text: "x"})
			if err != nil {
				b.Fatal(err)
			}
			_ = d(c)
			if sinkPrompt, err = svc.Assemble(c, vars); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("join", func(b *testing.B) {
		_, _, texts := benchPrompt(b, false)
		b.ReportAllocs()
		var s string
		for b.Loop() {
			s = strings.Join(texts, "\n\n")
		}
		_ = s
	})
}
