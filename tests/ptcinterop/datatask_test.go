//go:build unix

package ptcinterop

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/internal/modeltest"
	"github.com/cordisgo/harness/plugins/agent"
	"github.com/cordisgo/harness/plugins/mcpclient"
	"github.com/cordisgo/harness/plugins/model"
	"github.com/cordisgo/harness/plugins/ptc"
	"github.com/cordisgo/harness/plugins/sysprompt"
)

// The data task: 50 files, three of which contain a word; which three? Done by the agent
// loop against a local model server whose scripted model works as a model would in each
// mode (Standard: list the directory, read every file, answer from what it read; PTC: one
// program that does the same and returns the names), through
// @modelcontextprotocol/server-filesystem. Both answer the same; the bytes sent to the
// model are compared.
const (
	dataFiles = 50
	dataWord  = "aubergine"
	readTool  = "mcp__fs__read_text_file"
	listTool  = "mcp__fs__list_directory"
)

// dataDir writes the files: lines lines of text each (66 bytes a line), the word in three
// of them.
func dataDir(t *testing.T, lines int) (string, []string) {
	dir := t.TempDir()
	var want []string
	for i := range dataFiles {
		name := fmt.Sprintf("note-%02d.txt", i)
		var b strings.Builder
		for j := range lines {
			fmt.Fprintf(&b, "Line %d of note %d: the quarterly figures were reviewed and filed.\n", j, i)
		}
		if i%17 == 5 {
			b.WriteString("Remember to buy an " + dataWord + " for dinner.\n")
			want = append(want, name)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(b.String()), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir, want
}

// scriptedModel answers as a model doing the data task would.
func scriptedModel(dir string) func(*modeltest.Call) modeltest.Reply {
	return func(c *modeltest.Call) modeltest.Reply {
		last := c.Messages[len(c.Messages)-1]
		ptcMode := slices.Equal(c.Tools, []string{ptc.ToolName})
		if last.Role == "user" {
			if ptcMode {
				program := `const listing = await tools["` + listTool + `"]({path: ` + quoteJS(dir) + `});
const text = (r: ToolResult) => r.content.map((c) => c.type === "text" ? c.text : "").join("\n");
const names = text(listing).split("\n").filter((l) => l.startsWith("[FILE] ")).map((l) => l.slice(7));
const hits: string[] = [];
await Promise.all(names.map(async (n) => {
  const r = await tools["` + readTool + `"]({path: ` + quoteJS(dir) + ` + "/" + n});
  if (text(r).includes("` + dataWord + `")) hits.push(n);
}));
return hits.sort();`
				args, _ := json.Marshal(map[string]string{"code": program, "description": "find the notes that mention the word"})
				return modeltest.Reply{ToolCalls: []modeltest.ToolCall{{Name: ptc.ToolName, Arguments: string(args)}}}
			}
			args, _ := json.Marshal(map[string]string{"path": dir})
			return modeltest.Reply{ToolCalls: []modeltest.ToolCall{{Name: listTool, Arguments: string(args)}}}
		}
		// The last messages are tool results: find the assistant message they answer.
		var asked []modeltest.ToolCall
		results := map[string]string{}
		for _, m := range c.Messages {
			switch m.Role {
			case "assistant":
				asked = m.ToolCalls
			case "tool":
				results[m.ToolCallID] = m.Content
			}
		}
		if ptcMode {
			var hits []string
			out := results[asked[0].ID]
			if i := strings.Index(out, "["); i >= 0 {
				_ = json.Unmarshal([]byte(out[i:]), &hits)
			}
			return modeltest.Reply{Content: "The notes that mention " + dataWord + ": " + strings.Join(hits, ", ")}
		}
		if asked[0].Name == listTool {
			var calls []modeltest.ToolCall
			for _, l := range strings.Split(results[asked[0].ID], "\n") {
				if name, ok := strings.CutPrefix(l, "[FILE] "); ok {
					args, _ := json.Marshal(map[string]string{"path": dir + "/" + name})
					calls = append(calls, modeltest.ToolCall{Name: readTool, Arguments: string(args)})
				}
			}
			return modeltest.Reply{ToolCalls: calls}
		}
		var hits []string
		for _, tc := range asked {
			if strings.Contains(results[tc.ID], dataWord) {
				var a struct{ Path string }
				_ = json.Unmarshal([]byte(tc.Arguments), &a)
				hits = append(hits, filepath.Base(a.Path))
			}
		}
		slices.Sort(hits)
		return modeltest.Reply{Content: "The notes that mention " + dataWord + ": " + strings.Join(hits, ", ")}
	}
}

func quoteJS(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// runDataTask runs the task in mode and returns the answer and the bytes sent to the model.
func runDataTask(t *testing.T, mode string, lines int) (answer string, bytes, requests int, want []string) {
	t.Helper()
	fsEntry := suite.File(t, "@modelcontextprotocol/server-filesystem/dist/index.js")
	dir, want := dataDir(t, lines)
	dir, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	srv := modeltest.New(t, modeltest.Options{Reply: scriptedModel(dir)})
	chat, err := model.NewChat(model.ChatConfig{Name: "test", BaseURL: srv.URL, APIKey: srv.Key, Provider: model.ProviderDeepSeek})
	if err != nil {
		t.Fatal(err)
	}

	cfg := clientConfig("fs", mcpclient.TransportStdio)
	cfg.Command, cfg.Args = suite.Node(t), []string{fsEntry, dir}
	root, _ := fleet(t, readTool, cfg)
	if _, err := model.Key.Provide(root, model.NewService(map[string]model.Model{"test": chat}, "test")); err != nil {
		t.Fatal(err)
	}
	for _, p := range []struct {
		def ctx.PluginDef
		cfg any
	}{
		{sysprompt.Plugin, nil}, {ptc.Plugin, nil},
		{agent.Plugin, map[string]any{"sessionsDir": "-", "permissions": map[string]any{"default": "allow"}}},
	} {
		s, err := root.Plugin(p.def, p.cfg)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Wait(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	// Every plugin's contributions (the system prompt's sections, PTC's declarations) are in
	// place before the session's first request.
	if err := root.Settle(context.Background()); err != nil {
		t.Fatal(err)
	}
	svc, _ := agent.Key.Get(root)
	sess, err := svc.Start(agent.StartOptions{Mode: mode, Ephemeral: true})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sess.Close() }()
	end, err := sess.Send(context.Background(), "Which of the notes in "+dir+" mention the word "+dataWord+"?")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range srv.Accepted() {
		bytes += len(r.Body)
	}
	return end.Text, bytes, len(srv.Accepted()), want
}

// TestDataTask: the same answer in both modes, and the bytes sent to the model in each. PTC's
// cost is nearly fixed (the declarations of the server's 14 tools in the system prompt of two
// requests, about 26 KB), Standard's grows with the files read, so the ratio depends on their
// size: it is reported for notes of about 2.6 KB and asserted (at least 10×) for files of
// about 6.6 KB, a page of text.
func TestDataTask(t *testing.T) {
	for _, tt := range []struct {
		name  string
		lines int
		min   float64
	}{
		{"notes of 2.6 KB", 40, 0},
		{"pages of 6.6 KB", 100, 10},
	} {
		t.Run(tt.name, func(t *testing.T) {
			stdAnswer, stdBytes, stdReqs, want := runDataTask(t, agent.ModeStandard, tt.lines)
			ptcAnswer, ptcBytes, ptcReqs, _ := runDataTask(t, agent.ModePTC, tt.lines)
			wantAnswer := "The notes that mention " + dataWord + ": " + strings.Join(want, ", ")
			if stdAnswer != wantAnswer || ptcAnswer != wantAnswer {
				t.Fatalf("answers:\nstandard %q\nptc      %q\nwant     %q", stdAnswer, ptcAnswer, wantAnswer)
			}
			ratio := float64(stdBytes) / float64(ptcBytes)
			t.Logf("bytes sent to the model: standard %d in %d requests, ptc %d in %d requests: %.1f× fewer", stdBytes, stdReqs, ptcBytes, ptcReqs, ratio)
			if ratio < tt.min {
				t.Errorf("PTC sent %.1f× fewer bytes than Standard, want at least %.0f×", ratio, tt.min)
			}
		})
	}
}
