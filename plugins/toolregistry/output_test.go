package toolregistry_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/ctx/ctxtest"
	"github.com/cordisgo/harness/plugins/toolregistry"
)

func TestOutputCap(t *testing.T) {
	text, js := toolregistry.Text, func(s string) toolregistry.Content { return toolregistry.JSON(json.RawMessage(s)) }
	img := toolregistry.Image(toolregistry.Attachment{ID: "att_1", MediaType: "image/png", Size: 99})
	tests := []struct {
		name    string
		content []toolregistry.Content
		isError bool
		want    []toolregistry.Content
	}{
		{"under the cap", []toolregistry.Content{text("01234")}, false, []toolregistry.Content{text("01234")}},
		{"exactly the cap", []toolregistry.Content{text("0123456789")}, false, []toolregistry.Content{text("0123456789")}},
		{"images do not count", []toolregistry.Content{text("0123456789"), img}, false, []toolregistry.Content{text("0123456789"), img}},
		{"one text block cut", []toolregistry.Content{text("0123456789abc")}, false,
			[]toolregistry.Content{text("0123456789\n[output truncated: 3 of 13 bytes dropped]")}},
		{"second block cut, third dropped", []toolregistry.Content{text("01234"), text("56789ab"), text("cd")}, false,
			[]toolregistry.Content{text("01234"), text("56789\n[output truncated: 4 of 14 bytes dropped]")}},
		{"JSON that does not fit is dropped whole", []toolregistry.Content{text("0123"), js(`{"k":"long value"}`), text("tail")}, false,
			[]toolregistry.Content{text("0123\n[output truncated: 22 of 26 bytes dropped]")}},
		{"JSON first", []toolregistry.Content{js(`{"k":"long value"}`)}, false,
			[]toolregistry.Content{text("[output truncated: 18 of 18 bytes dropped]")}},
		{"cut at a UTF-8 boundary", []toolregistry.Content{text("ééééé€")}, false, // 10 + 3 bytes, cap 10 → 5 é
			[]toolregistry.Content{text("ééééé\n[output truncated: 3 of 13 bytes dropped]")}},
		{"cut inside a rune backs off", []toolregistry.Content{text("a€€€")}, false, // 1 + 9 bytes… cap 10 fits
			[]toolregistry.Content{text("a€€€")}},
		{"cut inside a rune", []toolregistry.Content{text("ab€€€")}, false, // 11 bytes, cap 10 → "ab€€" (8)
			[]toolregistry.Content{text("ab€€\n[output truncated: 3 of 11 bytes dropped]")}},
		{"images after the cut are dropped", []toolregistry.Content{text("0123456789x"), img}, false,
			[]toolregistry.Content{text("0123456789\n[output truncated: 1 of 11 bytes dropped]")}},
		{"error results are capped too", []toolregistry.Content{text("0123456789abc")}, true,
			[]toolregistry.Content{text("0123456789\n[output truncated: 3 of 13 bytes dropped]")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root, reg := newRegistry(t, map[string]any{"maxOutputBytes": 10})
			orig := &toolregistry.Result{Content: tc.content, IsError: tc.isError, Raw: json.RawMessage(`{"raw":"` + strings.Repeat("r", 50) + `"}`)}
			before := fmt.Sprint(orig.Content)
			if _, err := reg.Register(root, toolregistry.Tool{Name: "big",
				Execute: func(context.Context, *toolregistry.Call) (*toolregistry.Result, error) { return orig, nil }}); err != nil {
				t.Fatal(err)
			}
			res, _ := reg.Execute(root, root, "big", nil, toolregistry.ExecOptions{})
			if !reflect.DeepEqual(res.Content, tc.want) {
				t.Fatalf("content\n got %q\nwant %q", res.Content, tc.want)
			}
			if fmt.Sprint(orig.Content) != before {
				t.Fatal("the tool's result was modified")
			}
			if !bytes.Equal(res.Raw, orig.Raw) || res.IsError != tc.isError {
				t.Fatalf("raw %s, IsError %v", res.Raw, res.IsError)
			}
		})
	}
}

func TestHistory(t *testing.T) {
	root, reg := newRegistry(t, map[string]any{"historySize": 3})
	s := ctxtest.Only(t, root, toolregistry.Plugin)
	if _, err := reg.Register(root, reply("t", "")); err != nil {
		t.Fatal(err)
	}
	call := func(ids ...string) {
		for _, id := range ids {
			_, _ = reg.Execute(root, root, "t", nil, toolregistry.ExecOptions{CallID: id})
		}
	}
	ids := func() string {
		var out []string
		for _, r := range reg.History() {
			out = append(out, r.CallID)
		}
		return strings.Join(out, " ")
	}
	if got := ids(); got != "" {
		t.Fatalf("fresh history %q", got)
	}
	call("a", "b")
	if got := ids(); got != "a b" {
		t.Fatalf("history %q", got)
	}
	call("c", "d", "e")
	if got := ids(); got != "c d e" {
		t.Fatalf("history %q, want the newest 3", got)
	}
	// An update resizes the history in place, keeping the newest records and the
	// registrations.
	if err := s.Update(map[string]any{"historySize": 2}); err != nil {
		t.Fatal(err)
	}
	ctxtest.Settle(t, root)
	if now, _ := toolregistry.Key.Get(root); now != reg {
		t.Fatal("an update replaced the registry")
	}
	if got := ids(); got != "d e" {
		t.Fatalf("after shrinking: %q", got)
	}
	call("f")
	if got := ids(); got != "e f" {
		t.Fatalf("after shrinking and a call: %q", got)
	}
	if err := s.Update(map[string]any{"historySize": 4}); err != nil {
		t.Fatal(err)
	}
	call("g", "h", "i")
	if got := ids(); got != "f g h i" {
		t.Fatalf("after growing: %q", got)
	}
	if err := s.Update(map[string]any{"historySize": 0}); err != nil {
		t.Fatal(err)
	}
	call("j")
	if got := ids(); got != "" {
		t.Fatalf("historySize 0 keeps %q", got)
	}
	if _, ok := reg.Lookup(root, "t"); !ok {
		t.Fatal("an update dropped a registration")
	}
}

func TestRecordJSON(t *testing.T) {
	root, reg := newRegistry(t, nil)
	if _, err := reg.Register(root, toolregistry.Tool{Name: "fail", Execute: func(context.Context, *toolregistry.Call) (*toolregistry.Result, error) {
		return nil, errors.New("nope")
	}}); err != nil {
		t.Fatal(err)
	}
	_, _ = reg.Execute(root, root, "fail", json.RawMessage(`{"a":1}`), toolregistry.ExecOptions{CallID: "c1"})
	b, err := json.Marshal(reg.History()[0])
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if got["callId"] != "c1" || got["tool"] != "fail" || got["scope"] != "root" || got["outcome"] != "tool_error" ||
		got["error"].(map[string]any)["message"] != "nope" || got["args"].(map[string]any)["a"] != 1.0 {
		t.Fatalf("record JSON %s", b)
	}
}

func TestAttachments(t *testing.T) {
	_, reg := newRegistry(t, map[string]any{"attachmentMaxBytes": 10})
	store := reg.Attachments()
	put := func(n int) toolregistry.Attachment {
		t.Helper()
		a, err := store.Put("image/png", bytes.Repeat([]byte{byte(n)}, n))
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	a1, a2 := put(4), put(4)
	if a1.ID == a2.ID || a1.Size != 4 || a1.MediaType != "image/png" {
		t.Fatalf("attachments %+v %+v", a1, a2)
	}
	if data, mt, ok := store.Get(a1.ID); !ok || mt != "image/png" || !bytes.Equal(data, []byte{4, 4, 4, 4}) {
		t.Fatalf("Get = %v %q %v", data, mt, ok)
	}
	// The store is full at 8 of 10 bytes: a 5-byte attachment evicts the oldest.
	a3 := put(5)
	if _, _, ok := store.Get(a1.ID); ok {
		t.Fatal("the oldest attachment was not evicted")
	}
	for _, a := range []toolregistry.Attachment{a2, a3} {
		if _, _, ok := store.Get(a.ID); !ok {
			t.Fatalf("%s evicted", a.ID)
		}
	}
	if store.Size() != 9 || store.Len() != 2 {
		t.Fatalf("size %d, len %d", store.Size(), store.Len())
	}
	// Larger than the whole store: refused, nothing evicted.
	if _, err := store.Put("image/png", make([]byte, 11)); !errors.Is(err, toolregistry.ErrAttachmentTooLarge) {
		t.Fatalf("oversized Put: %v", err)
	}
	if store.Len() != 2 {
		t.Fatal("a refused attachment evicted others")
	}
	if _, err := store.Put("", []byte{1}); err == nil {
		t.Fatal("an attachment without a media type was accepted")
	}
	// The store keeps a copy.
	data := []byte{1, 2}
	a4, _ := store.Put("image/gif", data)
	data[0] = 9
	if got, _, _ := store.Get(a4.ID); got[0] != 1 {
		t.Fatal("the store aliases the caller's bytes")
	}
	if _, _, ok := store.Get("att_999"); ok {
		t.Fatal("unknown id found")
	}
}

func TestImageResult(t *testing.T) {
	root, reg := newRegistry(t, nil)
	png := []byte("\x89PNG\r\n\x1a\nfake image bytes")
	if _, err := reg.Register(root, toolregistry.Tool{Name: "screenshot",
		Execute: func(_ context.Context, call *toolregistry.Call) (*toolregistry.Result, error) {
			a, err := call.Attachments.Put("image/png", png)
			if err != nil {
				return nil, err
			}
			return &toolregistry.Result{Content: []toolregistry.Content{toolregistry.Text("captured"), toolregistry.Image(a)}}, nil
		}}); err != nil {
		t.Fatal(err)
	}
	res, err := reg.Execute(root, root, "screenshot", nil, toolregistry.ExecOptions{})
	if err != nil {
		t.Fatal(err)
	}
	img := res.Content[1]
	want := fmt.Sprintf("captured\n[image: image/png, %d bytes, id %s]", len(png), img.Attachment.ID)
	if got := res.Text(); got != want {
		t.Fatalf("model text %q, want %q", got, want)
	}
	b, _ := json.Marshal(res)
	if bytes.Contains(b, []byte(base64.StdEncoding.EncodeToString(png))) || bytes.Contains(b, png) {
		t.Fatalf("the result carries the image bytes: %s", b)
	}
	if data, mt, ok := reg.Attachments().Get(img.Attachment.ID); !ok || mt != "image/png" || !bytes.Equal(data, png) {
		t.Fatal("the bytes are not in the store")
	}
}

func TestModelText(t *testing.T) {
	tests := []struct {
		c    toolregistry.Content
		want string
	}{
		{toolregistry.Text("hi"), "hi"},
		{toolregistry.JSON(json.RawMessage(`{"a":1}`)), `{"a":1}`},
		{toolregistry.Image(toolregistry.Attachment{ID: "att_3", MediaType: "image/jpeg", Size: 1234}), "[image: image/jpeg, 1234 bytes, id att_3]"},
		{toolregistry.Content{Type: toolregistry.ContentImage}, "[image unavailable]"},
		{toolregistry.Content{Type: "audio"}, "[unsupported content type: audio]"},
	}
	for _, tc := range tests {
		if got := tc.c.ModelText(); got != tc.want {
			t.Errorf("ModelText(%+v) = %q, want %q", tc.c, got, tc.want)
		}
	}
	var nilResult *toolregistry.Result
	if nilResult.Text() != "" || (&toolregistry.Result{}).Text() != "" {
		t.Fatal("empty results render as empty text")
	}
}

func TestOptions(t *testing.T) {
	var def toolregistry.Config
	def.Default()
	if def != (toolregistry.Config{HistorySize: 100, MaxOutputBytes: 100000, AttachmentMaxBytes: 20 << 20, DefaultTimeoutMs: 120000}) {
		t.Fatalf("defaults %+v", def)
	}
	tests := []struct {
		name   string
		config any
		key    string // expected in the error, "" = valid
	}{
		{"defaults", nil, ""},
		{"all keys", map[string]any{"historySize": 0, "maxOutputBytes": 1, "attachmentMaxBytes": 0, "defaultTimeoutMs": 5}, ""},
		{"negative history", map[string]any{"historySize": -1}, "historySize"},
		{"zero output cap", map[string]any{"maxOutputBytes": 0}, "maxOutputBytes"},
		{"negative attachments", map[string]any{"attachmentMaxBytes": -1}, "attachmentMaxBytes"},
		{"zero timeout", map[string]any{"defaultTimeoutMs": 0}, "defaultTimeoutMs"},
		{"unknown key", map[string]any{"historyLen": 5}, "historyLen"},
		{"wrong type", map[string]any{"historySize": "many"}, "historySize"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := toolregistry.Plugin.DecodeConfig(tc.config)
			if tc.key == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var ce *ctx.ConfigError
			if !errors.As(err, &ce) || !strings.Contains(err.Error(), tc.key) {
				t.Fatalf("DecodeConfig: %v, want a config error naming %s", err, tc.key)
			}
		})
	}
	root := ctxtest.New(t)
	s := ctxtest.Mount(t, root, toolregistry.Plugin, map[string]any{"maxOutputBytes": -5})
	ctxtest.Settle(t, root)
	ctxtest.RequireState(t, s, ctx.Failed)
}
