package mcpclient

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/internal/grammartest"
	"github.com/cordisgo/harness/plugins/mcpclient/transport"
)

// decodeConfig mirrors how the plugin decodes: defaults, then strict JSON.
func decodeConfig(t *testing.T, doc string) (Config, error) {
	t.Helper()
	var c Config
	c.Default()
	dec := json.NewDecoder(strings.NewReader(doc))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return c, err
	}
	return c, c.Validate()
}

func TestConfigDefaults(t *testing.T) {
	c, err := decodeConfig(t, `{"serverName":"gh","transport":"stdio","command":"npx"}`)
	if err != nil {
		t.Fatal(err)
	}
	want := Config{
		ServerName: "gh", Transport: "stdio", Command: "npx",
		InheritEnv:        InheritEnv{Mode: transport.InheritScrubbed},
		ToolCallTimeoutMs: 60000, MaxToolCallMs: 600000, ElicitationTimeoutMs: 600000, StartupTimeoutMs: 60000,
		Reconnect:           ReconnectConfig{Enabled: true, InitialDelayMs: 500, MaxDelayMs: 30000, MaxAttempts: 10},
		MaxInstructionBytes: 32768, MaxOutputBytes: 100000,
	}
	got, _ := json.Marshal(c)
	exp, _ := json.Marshal(want)
	if !bytes.Equal(got, exp) {
		t.Fatalf("defaults:\n got %s\nwant %s", got, exp)
	}
	if c.ToolCallTimeout() != time.Minute || c.StartupTimeout() != time.Minute {
		t.Errorf("timeouts %v %v", c.ToolCallTimeout(), c.StartupTimeout())
	}
	if c.Reconnect.InitialDelay() != 500*time.Millisecond || c.Reconnect.MaxDelay() != 30*time.Second {
		t.Errorf("reconnect delays %v %v", c.Reconnect.InitialDelay(), c.Reconnect.MaxDelay())
	}
	if !c.Allows("anything") {
		t.Error("omitted allowedTools must admit every tool")
	}
}

func TestConfigDecodedOverridesDefaults(t *testing.T) {
	c, err := decodeConfig(t, `{
		"serverName": "web", "transport": "streamable-http", "url": "https://example.com/mcp",
		"headers": {"Authorization": "Bearer x"},
		"toolCallTimeoutMs": 1000, "failOnStartupError": true,
		"reconnect": {"maxAttempts": 3},
		"allowedTools": ["a", "b"], "protocolVersion": "auto", "maxOutputBytes": 10
	}`)
	if err != nil {
		t.Fatal(err)
	}
	if c.ToolCallTimeoutMs != 1000 || !c.FailOnStartupError || c.MaxOutputBytes != 10 {
		t.Errorf("scalars not decoded: %+v", c)
	}
	// Partial nested objects merge over the defaults.
	if c.Reconnect != (ReconnectConfig{Enabled: true, InitialDelayMs: 500, MaxDelayMs: 30000, MaxAttempts: 3}) {
		t.Errorf("reconnect = %+v", c.Reconnect)
	}
	if !c.Allows("a") || c.Allows("c") {
		t.Error("allowedTools not applied")
	}
}

func TestConfigStrictDecoding(t *testing.T) {
	_, err := decodeConfig(t, `{"serverName":"gh","transport":"stdio","command":"x","reconnect":{"maxAttemps":3}}`)
	if err == nil || !strings.Contains(err.Error(), "maxAttemps") {
		t.Fatalf("unknown nested key not rejected: %v", err)
	}
}

func TestConfigEffectiveProtocolVersion(t *testing.T) {
	tests := []struct{ transport, configured, want string }{
		{TransportStdio, "", "2025-11-25"},
		{TransportStdio, "auto", ""},
		{TransportStdio, "2025-06-18", "2025-06-18"},
		{TransportStreamableHTTP, "", ""},
		{TransportStreamableHTTP, "auto", ""},
		{TransportStreamableHTTP, "2025-11-25", "2025-11-25"},
	}
	for _, tt := range tests {
		c := Config{Transport: tt.transport, ProtocolVersion: tt.configured}
		if got := c.EffectiveProtocolVersion(); got != tt.want {
			t.Errorf("%s/%q: got %q, want %q", tt.transport, tt.configured, got, tt.want)
		}
	}
}

func TestConfigValidate(t *testing.T) {
	stdio := `"serverName":"gh","transport":"stdio","command":"npx"`
	http := `"serverName":"gh","transport":"streamable-http","url":"http://localhost:1/mcp"`
	tests := []struct {
		name string
		doc  string
		// wantErrs are full messages of the expected *ConfigErrors, in order.
		wantErrs []string
	}{
		{name: "stdio ok", doc: `{` + stdio + `,"args":["-y","x"],"env":{"A":"1"},"cwd":"/tmp","inheritEnv":{"mode":"none","extra":["HTTPS_PROXY"]}}`},
		{name: "http ok", doc: `{` + http + `,"headers":{"X-Api-Key":"k"}}`},
		{name: "protocol pinned ok", doc: `{` + http + `,"protocolVersion":"2024-11-05"}`},
		{name: "bad url scheme", doc: `{"serverName":"gh","transport":"streamable-http","url":"ftp://x"}`,
			wantErrs: []string{`key "url": expected an http or https URL, got "ftp://x"`}},
		{name: "url without host", doc: `{"serverName":"gh","transport":"streamable-http","url":"http:///mcp"}`,
			wantErrs: []string{`key "url": expected an http or https URL, got "http:///mcp"`}},
		{name: "bad url redacted", doc: `{"serverName":"gh","transport":"streamable-http","url":"ftp://u:pw@x?token=abc"}`,
			wantErrs: []string{`key "url": expected an http or https URL, got "ftp://u:[redacted]@x?token=[redacted]"`}},
		{name: "missing url", doc: `{"serverName":"gh","transport":"streamable-http"}`,
			wantErrs: []string{`key "url": required for transport "streamable-http"`}},
		{name: "bad server name", doc: `{"serverName":"my server","transport":"stdio","command":"x"}`,
			wantErrs: []string{`key "serverName": must match ^[A-Za-z0-9_-]{1,32}$, got "my server"`}},
		{name: "server name too long", doc: `{"serverName":"` + strings.Repeat("a", 33) + `","transport":"stdio","command":"x"}`,
			wantErrs: []string{`key "serverName"`}},
		{name: "missing transport", doc: `{"serverName":"gh"}`,
			wantErrs: []string{`key "transport": required: "stdio" or "streamable-http"`}},
		{name: "unknown transport", doc: `{"serverName":"gh","transport":"sse"}`,
			wantErrs: []string{`key "transport": expected "stdio" or "streamable-http", got "sse"`}},
		{name: "stdio needs command", doc: `{"serverName":"gh","transport":"stdio"}`,
			wantErrs: []string{`key "command": required for transport "stdio"`}},
		{name: "stdio forbids url and headers", doc: `{` + stdio + `,"url":"http://x","headers":{"A":"b"}}`,
			wantErrs: []string{`key "headers": not allowed for transport "stdio"`, `key "url": not allowed for transport "stdio"`}},
		{name: "http forbids stdio keys", doc: `{` + http + `,"command":"x","args":["y"],"cwd":"/","env":{"A":"1"}}`,
			wantErrs: []string{`key "args": not allowed`, `key "command": not allowed`, `key "cwd": not allowed`, `key "env": not allowed`}},
		{name: "bad env name", doc: `{` + stdio + `,"env":{"A=B":"1"}}`,
			wantErrs: []string{`key "env.A=B": not a valid environment variable name`}},
		{name: "bad header name", doc: `{` + http + `,"headers":{"Bad Header":"1"}}`,
			wantErrs: []string{`key "headers.Bad Header": not a valid HTTP header name`}},
		{name: "header value injection", doc: `{` + http + `,"headers":{"X":"a\r\nB: c"}}`,
			wantErrs: []string{`key "headers.X": value must not contain CR, LF or NUL`}},
		{name: "empty allowedTools", doc: `{` + stdio + `,"allowedTools":[]}`,
			wantErrs: []string{`key "allowedTools": is empty: omit it to admit every tool the server lists, or name at least one tool`}},
		{name: "blank and duplicate allowedTools", doc: `{` + stdio + `,"allowedTools":["a"," ","a"]}`,
			wantErrs: []string{`key "allowedTools[1]": must be a non-empty tool name`, `key "allowedTools[2]": lists "a" more than once`}},
		{name: "zero timeout", doc: `{` + stdio + `,"toolCallTimeoutMs":0}`,
			wantErrs: []string{`key "toolCallTimeoutMs": must be a positive number of milliseconds no greater than 2147483647, got 0`}},
		{name: "huge startup timeout", doc: `{` + stdio + `,"startupTimeoutMs":2147483648}`,
			wantErrs: []string{`key "startupTimeoutMs": must be a positive number`}},
		{name: "reconnect bounds", doc: `{` + stdio + `,"reconnect":{"initialDelayMs":5000,"maxDelayMs":1000,"maxAttempts":0}}`,
			wantErrs: []string{`key "reconnect.initialDelayMs": must be less than or equal to reconnect.maxDelayMs (1000), got 5000`,
				`key "reconnect.maxAttempts": must be a positive integer, got 0`}},
		{name: "byte caps", doc: `{` + stdio + `,"maxInstructionBytes":0,"maxOutputBytes":-1}`,
			wantErrs: []string{`key "maxInstructionBytes": must be a positive`, `key "maxOutputBytes": must be a positive`}},
		{name: "unknown protocol", doc: `{` + stdio + `,"protocolVersion":"2099-01-01"}`,
			wantErrs: []string{`key "protocolVersion": expected "auto" or one of 2026-07-28, 2025-11-25`}},
		{name: "bad inherit mode", doc: `{` + stdio + `,"inheritEnv":{"mode":"some"}}`,
			wantErrs: []string{`key "inheritEnv.mode": expected "scrubbed", "minimal", "all" or "none", got "some"`}},
		{name: "deniedTools ok", doc: `{` + stdio + `,"allowedTools":["a","b"],"deniedTools":["b","c"]}`},
		{name: "blank and duplicate deniedTools", doc: `{` + stdio + `,"deniedTools":["a","","a"]}`,
			wantErrs: []string{`key "deniedTools[1]": must be a non-empty tool name`, `key "deniedTools[2]": lists "a" more than once`}},
		{name: "bad inherit extra", doc: `{` + stdio + `,"inheritEnv":{"mode":"minimal","extra":[""]}}`,
			wantErrs: []string{`key "inheritEnv.extra[0]": not a valid environment variable name`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := decodeConfig(t, tt.doc)
			if len(tt.wantErrs) == 0 {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("no error, want %q", tt.wantErrs)
			}
			if !errors.Is(err, ctx.ErrInvalidConfig) {
				t.Errorf("%v does not match ctx.ErrInvalidConfig", err)
			}
			var ce *ctx.ConfigError
			if !errors.As(err, &ce) || ce.Key == "" {
				t.Errorf("no *ctx.ConfigError naming the key in %v", err)
			}
			lines := strings.Split(err.Error(), "\n")
			if len(lines) != len(tt.wantErrs) {
				t.Fatalf("got %d errors, want %d:\n%v", len(lines), len(tt.wantErrs), err)
			}
			for i, want := range tt.wantErrs {
				if !strings.Contains(lines[i], want) {
					t.Errorf("error %d = %q, want it to contain %q", i, lines[i], want)
				}
			}
		})
	}
}

func TestConfigRedacted(t *testing.T) {
	tools := []string{"a"}
	c := Config{
		ServerName: "gh", Transport: TransportStdio, Command: "npx", Args: []string{"-y"},
		Env:          map[string]string{"GITHUB_TOKEN": "ghp_secret"},
		Headers:      map[string]string{"Authorization": "Bearer s3cret"},
		URL:          "https://user:pa55@example.com/mcp?key=s3cret&x=1",
		AllowedTools: &tools,
	}
	r := c.Redacted()
	if r.Env["GITHUB_TOKEN"] != "[redacted]" || r.Headers["Authorization"] != "[redacted]" {
		t.Fatalf("values not redacted: %+v", r)
	}
	if c.Env["GITHUB_TOKEN"] != "ghp_secret" || c.Headers["Authorization"] != "Bearer s3cret" {
		t.Fatal("Redacted modified the original")
	}
	if r.URL != "https://user:[redacted]@example.com/mcp?key=[redacted]&x=1" {
		t.Errorf("url %q: want the password and the key hidden, x shown", r.URL)
	}
	// Redaction hides values, not references.
	refs := Config{ServerName: "ev", Transport: TransportStreamableHTTP, URL: "https://example.com/mcp?page=2",
		Headers: map[string]string{"Authorization": "Bearer ${secret:evtoken}", "X-Key": "${EV_KEY}"}}
	rr := refs.Redacted()
	if rr.Headers["Authorization"] != "Bearer ${secret:evtoken}" || rr.Headers["X-Key"] != "${EV_KEY}" || rr.URL != refs.URL {
		t.Errorf("references or a URL without credentials hidden: %+v", rr)
	}
	(*r.AllowedTools)[0] = "changed"
	r.Args[0] = "changed"
	if tools[0] != "a" || c.Args[0] != "-y" {
		t.Fatal("Redacted shares slices with the original")
	}
	var logs bytes.Buffer
	slog.New(slog.NewTextHandler(&logs, nil)).Info("config", "cfg", c)
	for _, secret := range []string{"ghp_secret", "s3cret", "pa55"} {
		if strings.Contains(logs.String(), secret) {
			t.Errorf("log leaks %q: %s", secret, logs.String())
		}
		if b, _ := json.Marshal(r); bytes.Contains(b, []byte(secret)) {
			t.Errorf("redacted config leaks %q: %s", secret, b)
		}
	}
	for _, printed := range []string{fmt.Sprint(c), fmt.Sprintf("%v|%+v|%s", c, c, c)} {
		for _, secret := range []string{"ghp_secret", "s3cret", "pa55"} {
			if strings.Contains(printed, secret) {
				t.Errorf("formatting leaks %q: %s", secret, printed)
			}
		}
	}
	if !strings.Contains(logs.String(), "GITHUB_TOKEN") {
		t.Errorf("log should keep the variable name: %s", logs.String())
	}
}

func TestValidServerNameGrammar(t *testing.T) {
	grammartest.Compare(t, `^[A-Za-z0-9_-]{1,32}$`, ValidServerName, "zAZ09_-.:/ \x00é", maxServerNameLen)
}
