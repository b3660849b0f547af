package mcpclient

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// go-sdk v1.8.0 has no tasks (the 2025-11-25 revision's utility): its types drop the task
// fields, its client refuses requests of methods it does not know, and nothing lets a
// client declare a capability outside its struct. The harness builds tasks on the SDK's
// extension points — sending and receiving middleware, custom methods, its own params and
// result types — and, where a type has no room, a shim at the JSON-RPC layer that moves
// what the SDK would drop into _meta under the keys below, where the middleware finds it
// (docs/protocol.md, "Tasks"). The shim reads each message the server sends (a stdio line,
// an HTTP body or SSE event); it frames, routes and answers nothing itself.
const (
	// metaTask carries a request's task params: on an incoming sampling/createMessage or
	// elicitation/create (moved from params.task), and on an outgoing tools/call, where the
	// sending middleware turns it into params.task.
	metaTask = "harness.cordisgo.dev/task"
	// metaCreatedTask carries a CreateTaskResult's task on the CallToolResult it decodes into.
	metaCreatedTask = "harness.cordisgo.dev/createdTask"
	// metaServerTasks carries the server's tasks capability on its InitializeResult.
	metaServerTasks = "harness.cordisgo.dev/serverTasks"
	// metaExecution carries a tool's execution (taskSupport) on the Tool.
	metaExecution = "harness.cordisgo.dev/execution"
	// metaTunnel carries an incoming tasks/get, tasks/result, tasks/list or tasks/cancel
	// (its method and params), delivered to the client's middleware as a ping.
	metaTunnel = "harness.cordisgo.dev/tunnel"
	// metaRelatedTask associates a message with a task (the specification's key).
	metaRelatedTask = "io.modelcontextprotocol/related-task"
)

// shimMessage rewrites one message from the server in place, so that the SDK's types keep
// what they would drop; it reports whether it changed anything. Most messages are left
// alone after a substring test.
func shimMessage(msg jsonrpc.Message) bool {
	switch m := msg.(type) {
	case *jsonrpc.Request:
		return shimRequest(m)
	case *jsonrpc.Response:
		if m.Error != nil || len(m.Result) == 0 || !mayCarryTasks(m.Result) {
			return false
		}
		out, ok := shimResult(m.Result)
		if ok {
			m.Result = out
		}
		return ok
	}
	return false
}

// mayCarryTasks is the cheap test before a result is decoded.
func mayCarryTasks(b []byte) bool {
	return bytes.Contains(b, []byte(`"task`)) || bytes.Contains(b, []byte(`"execution"`))
}

func shimRequest(m *jsonrpc.Request) bool {
	switch m.Method {
	case "tasks/get", "tasks/result", "tasks/list", "tasks/cancel":
		if !m.ID.IsValid() {
			return false
		}
		params := m.Params
		if len(params) == 0 {
			params = json.RawMessage("{}")
		}
		b, err := json.Marshal(map[string]any{"_meta": map[string]any{metaTunnel: map[string]any{"method": m.Method, "params": params}}})
		if err != nil {
			return false
		}
		m.Method, m.Params = "ping", b
		return true
	case "sampling/createMessage", "elicitation/create":
		return taskToMeta(m)
	}
	return false
}

// taskToMeta moves a request's params.task into _meta (metaTask), where the middleware
// finds it; it reports whether it did.
func taskToMeta(m *jsonrpc.Request) bool {
	if !bytes.Contains(m.Params, []byte(`"task"`)) {
		return false
	}
	var p map[string]json.RawMessage
	if json.Unmarshal(m.Params, &p) != nil || p["task"] == nil {
		return false
	}
	meta := map[string]json.RawMessage{}
	if raw := p["_meta"]; raw != nil && json.Unmarshal(raw, &meta) != nil {
		return false
	}
	meta[metaTask] = p["task"]
	delete(p, "task")
	b, err := json.Marshal(meta)
	if err != nil {
		return false
	}
	p["_meta"] = b
	if b, err = json.Marshal(p); err != nil {
		return false
	}
	m.Params = b
	return true
}

// shimResult moves a CreateTaskResult's task, an initialize result's tasks capability and
// the tools' execution into _meta.
func shimResult(raw json.RawMessage) (json.RawMessage, bool) {
	var r map[string]any
	if json.Unmarshal(raw, &r) != nil {
		return nil, false
	}
	changed := false
	if task, ok := r["task"].(map[string]any); ok && task["taskId"] != nil {
		setMeta(r, metaCreatedTask, task)
		changed = true
	}
	if caps, ok := r["capabilities"].(map[string]any); ok && r["protocolVersion"] != nil && caps["tasks"] != nil {
		setMeta(r, metaServerTasks, caps["tasks"])
		changed = true
	}
	if tools, ok := r["tools"].([]any); ok {
		for _, t := range tools {
			if tool, ok := t.(map[string]any); ok && tool["execution"] != nil {
				setMeta(tool, metaExecution, tool["execution"])
				changed = true
			}
		}
	}
	if !changed {
		return nil, false
	}
	out, err := json.Marshal(r)
	return out, err == nil
}

// setMeta sets key in obj's _meta.
func setMeta(obj map[string]any, key string, v any) {
	meta, _ := obj["_meta"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
	}
	meta[key] = v
	obj["_meta"] = meta
}

// shimBytes rewrites one encoded message (an HTTP body or SSE event of the server's);
// anything it cannot decode passes unchanged.
func shimBytes(b []byte) []byte {
	if !mayCarryTasks(b) {
		return b
	}
	msg, err := jsonrpc.DecodeMessage(b)
	if err != nil || !shimMessage(msg) {
		return b
	}
	out, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return b
	}
	return out
}

// shimTransport wraps a transport whose connection the SDK does not need to see through
// (stdio, in-memory): every message read is shimmed, and a progress notification counted
// (progressRead). HTTP transports are shimmed below, in their round tripper
// (transport.HTTP.Rewrite, dialOptions.rewrite): the SDK's own streamable connection must
// stay the one it talks to.
type shimTransport struct {
	mcp.Transport
	progressRead func(token any) // dialOptions.onProgressRead
}

// shim wraps t in the reading side this package puts under every session (shimTransport).
func (o dialOptions) shim(t mcp.Transport) mcp.Transport {
	return shimTransport{Transport: t, progressRead: o.onProgressRead}
}

// rewrite is the reading side of an HTTP transport: it counts a progress notification, then
// shims the message (shimBytes).
func (o dialOptions) rewrite() func([]byte) []byte {
	if o.onProgressRead == nil {
		return shimBytes
	}
	return func(b []byte) []byte {
		if bytes.Contains(b, []byte(`"notifications/progress"`)) {
			if msg, err := jsonrpc.DecodeMessage(b); err == nil {
				if token, ok := progressRead(msg); ok {
					o.onProgressRead(token)
				}
			}
		}
		return shimBytes(b)
	}
}

func (t shimTransport) Connect(cx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(cx)
	if err != nil {
		return nil, err
	}
	return shimConn{c, t.progressRead}, nil
}

type shimConn struct {
	mcp.Connection
	progressRead func(token any)
}

func (c shimConn) Read(cx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(cx)
	if err == nil {
		if c.progressRead != nil {
			if token, ok := progressRead(msg); ok {
				c.progressRead(token)
			}
		}
		shimMessage(msg)
	}
	return msg, err
}

// metaValue decodes meta[key] into v; false when absent or of another shape.
func metaValue(meta map[string]any, key string, v any) bool {
	raw, ok := meta[key]
	if !ok {
		return false
	}
	b, err := json.Marshal(raw)
	return err == nil && json.Unmarshal(b, v) == nil
}

// withMeta returns meta with key set to v; meta, which the caller may share, is copied.
func withMeta(meta mcp.Meta, key string, v any) mcp.Meta {
	out := make(mcp.Meta, len(meta)+1)
	maps.Copy(out, meta)
	out[key] = v
	return out
}
