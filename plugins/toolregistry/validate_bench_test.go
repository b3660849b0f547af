package toolregistry

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cordisgo/harness/testkit/benchtest"
	"github.com/cordisgo/harness/testkit/mcptest"
)

// BenchmarkValidationPaired measures what the argument validator costs on a stdio tool
// call: each iteration makes two calls of the test server's echo tool over one real stdio
// session, in alternating order, each validating its arguments against echo's input schema
// first — one with the registry's validator (checkArgs, as Registry.Execute runs it), one
// with jsonschema-go alone (encoding/json decoding, then the schema resolved once and
// cached). It reports the median of each kind of call and of each validation alone, and
// the difference of the validations in percent of the call ("saving-%").
//
//	go test -run '^$' -bench BenchmarkValidationPaired -benchtime=3000x -count=5 ./plugins/toolregistry/
func BenchmarkValidationPaired(b *testing.B) {
	for _, size := range []int{5, 512, 4096} {
		b.Run(fmt.Sprintf("echo-%dB", size), func(b *testing.B) {
			args, _ := json.Marshal(map[string]string{"text": strings.Repeat("x", size)})
			cs := benchStdioSession(b)
			lt, err := cs.ListTools(context.Background(), nil)
			if err != nil {
				b.Fatal(err)
			}
			var params json.RawMessage
			for _, t := range lt.Tools {
				if t.Name == "echo" {
					params, _ = json.Marshal(t.InputSchema)
				}
			}
			e, err := compile(Tool{Name: "echo", Parameters: params, Execute: func(context.Context, *Call) (*Result, error) { return nil, nil }}, "bench")
			if err != nil || e.args == nil {
				b.Fatalf("echo's schema %s: %v", params, err)
			}
			sdk := new(jsonschema.Schema)
			if err := json.Unmarshal(params, sdk); err != nil {
				b.Fatal(err)
			}
			resolved, err := sdk.Resolve(nil) // the cache: resolved once per tool
			if err != nil {
				b.Fatal(err)
			}
			registryCheck := func() {
				if terr := checkArgs(e, "echo", args); terr != nil {
					b.Fatal(terr)
				}
			}
			sdkCheck := func() {
				var v any
				if err := json.Unmarshal(args, &v); err != nil {
					b.Fatal(err)
				}
				if err := resolved.Validate(v); err != nil {
					b.Fatal(err)
				}
			}
			cx := context.Background()
			call := func(check func(), checks, calls *[]time.Duration) {
				t0 := time.Now()
				check()
				t1 := time.Now()
				if _, err := cs.CallTool(cx, &mcp.CallToolParams{Name: "echo", Arguments: args}); err != nil {
					b.Fatal(err)
				}
				*checks = append(*checks, t1.Sub(t0))
				*calls = append(*calls, time.Since(t0))
			}
			var regChecks, regCalls, sdkChecks, sdkCalls []time.Duration
			benchtest.Alternate(b, func() { call(registryCheck, &regChecks, &regCalls) }, func() { call(sdkCheck, &sdkChecks, &sdkCalls) })
			rc, sc := benchtest.Median(regCalls), benchtest.Median(sdkCalls)
			rv, sv := benchtest.Median(regChecks), benchtest.Median(sdkChecks)
			b.ReportMetric(float64(rc), "registry-ns/call")
			b.ReportMetric(float64(sc), "sdk-ns/call")
			b.ReportMetric(float64(rv), "registry-validate-ns")
			b.ReportMetric(float64(sv), "sdk-validate-ns")
			b.ReportMetric(100*float64(sv-rv)/float64(sc), "saving-%")
		})
	}
}

// benchStdioSession starts the test binary as the stdio test server and connects a go-sdk
// client to it.
func benchStdioSession(b *testing.B) *mcp.ClientSession {
	b.Helper()
	command, env := mcptest.Stdio(b, mcptest.Normal, "bench")
	cmd := exec.Command(command)
	cmd.Env = os.Environ()
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.Env = append(cmd.Env, "GORACE=atexit_sleep_ms=0")
	c := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "0"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = cs.Close() })
	return cs
}
