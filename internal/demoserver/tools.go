package demoserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Limits and defaults of the demo tools. They are part of the tools' input
// schemas, so clients and models see them.
const (
	defaultSlowMillis = 1000     // slow's ms when omitted
	maxSlowMillis     = 600000   // ten minutes
	maxBigBytes       = 16 << 20 // 16 MiB
	maxExtraTools     = 100      // add_tool's budget per server
	extraToolPrefix   = "extra_"
	extraNamePattern  = `^[A-Za-z0-9_-]{1,32}$`
	defaultFailText   = "the fail tool always fails"
)

// demo holds one server's state. Its handlers run concurrently, one goroutine
// per request; mu guards extras.
type demo struct {
	server *mcp.Server
	name   string
	logger *slog.Logger
	stop   <-chan struct{} // closed when the serving function is shutting down

	pageSize int        // as configured (0: the SDK's default)
	configMu sync.Mutex // serialises the registrations of demo://config.json

	mu     sync.Mutex
	extras map[string]struct{} // names of tools registered by add_tool
}

type echoInput struct {
	Text string `json:"text" jsonschema:"the text to send back"`
}

type addInput struct {
	A float64 `json:"a" jsonschema:"the first addend"`
	B float64 `json:"b" jsonschema:"the second addend"`
}

type addOutput struct {
	Sum float64 `json:"sum" jsonschema:"the sum a + b"`
}

type slowInput struct {
	Ms int `json:"ms,omitempty" jsonschema:"how long to wait, in milliseconds"`
}

type imageInput struct{}

type failInput struct {
	Message string `json:"message,omitempty" jsonschema:"the error message to return"`
}

type addToolInput struct {
	Name string `json:"name" jsonschema:"the new tool is registered as extra_<name>"`
}

type extraInput struct{}

type bigInput struct {
	Bytes int `json:"bytes" jsonschema:"the size of the text result in bytes"`
}

// Input schemas are built once and shared by every server (schemas are never
// modified after construction). Constraints that struct tags cannot express
// (bounds, defaults, patterns) are added here.
var (
	echoSchema  = objectSchema[echoInput](nil)
	addSchema   = objectSchema[addInput](nil)
	imageSchema = objectSchema[imageInput](nil)
	failSchema  = objectSchema[failInput](nil)
	extraSchema = objectSchema[extraInput](nil)
	slowSchema  = objectSchema[slowInput](func(s *jsonschema.Schema) {
		ms := s.Properties["ms"]
		ms.Minimum = new(0.0)
		ms.Maximum = new(float64(maxSlowMillis))
		ms.Default = json.RawMessage(strconv.Itoa(defaultSlowMillis))
	})
	addToolSchema = objectSchema[addToolInput](func(s *jsonschema.Schema) {
		s.Properties["name"].Pattern = extraNamePattern
	})
	bigSchema = objectSchema[bigInput](func(s *jsonschema.Schema) {
		b := s.Properties["bytes"]
		b.Minimum = new(0.0)
		b.Maximum = new(float64(maxBigBytes))
	})
)

// objectSchema infers the JSON schema of T and lets adjust refine it.
// It panics on failure: the input types are fixed, so a failure is a bug.
func objectSchema[T any](adjust func(*jsonschema.Schema)) *jsonschema.Schema {
	s, err := jsonschema.For[T](nil)
	if err != nil {
		panic(fmt.Sprintf("demoserver: inferring schema of %T: %v", *new(T), err))
	}
	if adjust != nil {
		adjust(s)
	}
	return s
}

// addTools registers the fixed tool set.
func (d *demo) addTools() {
	readOnly := &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: new(false)}

	mcp.AddTool(d.server, &mcp.Tool{
		Name:        "echo",
		Title:       "Echo",
		Description: "Returns the given text unchanged.",
		InputSchema: echoSchema,
		Annotations: readOnly,
	}, d.echo)
	mcp.AddTool(d.server, &mcp.Tool{
		Name:        "add",
		Title:       "Add",
		Description: "Adds two numbers. The sum is returned as text and as structured content {\"sum\": number}.",
		InputSchema: addSchema,
		Annotations: readOnly,
	}, d.add)
	mcp.AddTool(d.server, &mcp.Tool{
		Name:  "slow",
		Title: "Slow",
		Description: fmt.Sprintf("Waits ms milliseconds (default %d, at most %d) and reports progress when the request "+
			"carries a progress token. Returns early with an error when the request is cancelled.",
			defaultSlowMillis, maxSlowMillis),
		InputSchema: slowSchema,
		Annotations: readOnly,
	}, d.slow)
	mcp.AddTool(d.server, &mcp.Tool{
		Name:        "image",
		Title:       "Image",
		Description: fmt.Sprintf("Returns a small PNG image (a %dx%d gradient).", logoSize, logoSize),
		InputSchema: imageSchema,
		Annotations: readOnly,
	}, d.image)
	mcp.AddTool(d.server, &mcp.Tool{
		Name:        "fail",
		Title:       "Fail",
		Description: "Always fails: returns a tool result marked isError with the given message.",
		InputSchema: failSchema,
		Annotations: readOnly,
	}, d.fail)
	mcp.AddTool(d.server, &mcp.Tool{
		Name:  "add_tool",
		Title: "Add a tool",
		Description: "Registers a new tool named extra_<name> on this server, which then notifies clients " +
			"that the tool list changed. Registering an existing name replaces it.",
		InputSchema: addToolSchema,
		Annotations: &mcp.ToolAnnotations{IdempotentHint: true, DestructiveHint: new(false), OpenWorldHint: new(false)},
	}, d.addTool)
	mcp.AddTool(d.server, &mcp.Tool{
		Name:        "big",
		Title:       "Big output",
		Description: fmt.Sprintf("Returns a text result of exactly the given number of bytes (at most %d).", maxBigBytes),
		InputSchema: bigSchema,
		Annotations: readOnly,
	}, d.big)
	mcp.AddTool(d.server, &mcp.Tool{
		Name:  "ask",
		Title: "Ask the user",
		Description: "Asks the client's user through elicitation: mode form (a form with a name, an age, a colour, " +
			"a yes/no and a secret token, each with its default but the token) or url (a page to visit, confirmed " +
			"at once). Returns the answer: accept with the values (the token by its length), decline or cancel.",
		InputSchema: askSchema,
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: new(false)},
	}, d.ask)
}

// textResult is a successful result holding one text block.
func textResult(text string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}

func (d *demo) echo(_ context.Context, _ *mcp.CallToolRequest, in echoInput) (*mcp.CallToolResult, any, error) {
	return textResult(in.Text), nil, nil
}

func (d *demo) add(_ context.Context, _ *mcp.CallToolRequest, in addInput) (*mcp.CallToolResult, addOutput, error) {
	sum := in.A + in.B
	if math.IsInf(sum, 0) {
		// JSON has no infinities; report it instead of failing to encode.
		return nil, addOutput{}, fmt.Errorf("add: %g + %g overflows", in.A, in.B)
	}
	return textResult(strconv.FormatFloat(sum, 'g', -1, 64)), addOutput{Sum: sum}, nil
}

// progressInterval is how often slow reports progress while waiting total.
func progressInterval(total time.Duration) time.Duration {
	return min(max(total/10, 10*time.Millisecond), time.Second)
}

func (d *demo) slow(cx context.Context, req *mcp.CallToolRequest, in slowInput) (*mcp.CallToolResult, any, error) {
	total := time.Duration(in.Ms) * time.Millisecond
	token := req.Params.GetProgressToken()
	start := time.Now()

	sent := -1.0 // the last progress sent; progress must increase
	report := func(elapsed time.Duration) {
		if token == nil {
			return
		}
		done := min(elapsed, total).Milliseconds()
		if float64(done) <= sent {
			return
		}
		sent = float64(done)
		err := req.Session.NotifyProgress(cx, &mcp.ProgressNotificationParams{
			ProgressToken: token,
			Progress:      float64(done),
			Total:         float64(in.Ms),
			Message:       fmt.Sprintf("waited %d of %d ms", done, in.Ms),
		})
		if err != nil {
			d.logger.Debug("slow: progress notification failed", slog.Any("err", err))
		}
	}

	timer := time.NewTimer(total)
	defer timer.Stop()
	var tick <-chan time.Time
	if token != nil && total > 0 {
		report(0)
		ticker := time.NewTicker(progressInterval(total))
		defer ticker.Stop()
		tick = ticker.C
	}
	for {
		select {
		case <-cx.Done():
			elapsed := time.Since(start)
			cause := context.Cause(cx)
			d.logger.Info("slow: cancelled",
				slog.Int("ms", in.Ms), slog.Duration("elapsed", elapsed), slog.Any("cause", cause))
			return nil, nil, fmt.Errorf("slow: cancelled after %d of %d ms: %w", elapsed.Milliseconds(), in.Ms, cause)
		case <-d.stop:
			d.logger.Info("slow: interrupted by shutdown", slog.Int("ms", in.Ms))
			return nil, nil, fmt.Errorf("slow: %w", errShuttingDown)
		case <-tick:
			report(time.Since(start))
		case <-timer.C:
			report(total)
			return textResult(fmt.Sprintf("waited %d ms", in.Ms)), nil, nil
		}
	}
}

func (d *demo) image(context.Context, *mcp.CallToolRequest, imageInput) (*mcp.CallToolResult, any, error) {
	return &mcp.CallToolResult{Content: []mcp.Content{
		&mcp.ImageContent{Data: logoPNG(), MIMEType: "image/png"},
	}}, nil, nil
}

func (d *demo) fail(_ context.Context, _ *mcp.CallToolRequest, in failInput) (*mcp.CallToolResult, any, error) {
	msg := in.Message
	if msg == "" {
		msg = defaultFailText
	}
	return &mcp.CallToolResult{
		IsError: true,
		Content: []mcp.Content{&mcp.TextContent{Text: msg}},
	}, nil, nil
}

// errShuttingDown is returned by slow when the server is shutting down.
var errShuttingDown = errors.New("server shutting down")

// errTooManyTools is returned by add_tool once a server holds maxExtraTools.
var errTooManyTools = errors.New("too many extra tools")

func (d *demo) addTool(cx context.Context, _ *mcp.CallToolRequest, in addToolInput) (*mcp.CallToolResult, any, error) {
	name := extraToolPrefix + in.Name
	d.mu.Lock()
	_, replaced := d.extras[name]
	if !replaced && len(d.extras) >= maxExtraTools {
		d.mu.Unlock()
		return nil, nil, fmt.Errorf("add_tool %s: %w (limit %d)", name, errTooManyTools, maxExtraTools)
	}
	d.extras[name] = struct{}{} // reserved: the budget holds however calls interleave
	d.mu.Unlock()

	mcp.AddTool(d.server, &mcp.Tool{
		Name:        name,
		Title:       "Extra tool " + in.Name,
		Description: "A tool registered at run time by add_tool. Returns a fixed text.",
		InputSchema: extraSchema,
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: new(false)},
	}, func(context.Context, *mcp.CallToolRequest, extraInput) (*mcp.CallToolResult, any, error) {
		return textResult(name + ": registered at run time by add_tool"), nil, nil
	})

	verb := "registered"
	if replaced {
		verb = "replaced"
	} else {
		// demo://config.json lists the extra tools: it changed.
		d.addConfig()
		if err := d.server.ResourceUpdated(cx, &mcp.ResourceUpdatedNotificationParams{URI: configURI}); err != nil {
			d.logger.Warn("add_tool: notifying the subscribers of "+configURI, slog.Any("err", err))
		}
	}
	d.logger.Info("add_tool: "+verb, slog.String("tool", name))
	return textResult(verb + " tool " + name), nil, nil
}

// bigLine is the pattern big repeats. It is plain ASCII, so cutting it at any
// byte leaves valid UTF-8 and the text has exactly the requested length.
const bigLine = "The quick brown fox jumps over the lazy dog. 0123456789 ABCDEFGHIJ\n"

func (d *demo) big(_ context.Context, _ *mcp.CallToolRequest, in bigInput) (*mcp.CallToolResult, any, error) {
	n := min(max(in.Bytes, 0), maxBigBytes) // the schema already enforces the bounds
	var b strings.Builder
	b.Grow(n)
	for b.Len()+len(bigLine) <= n {
		b.WriteString(bigLine)
	}
	b.WriteString(bigLine[:n-b.Len()])
	return textResult(b.String()), nil, nil
}
