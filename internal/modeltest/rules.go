package modeltest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// deser starts DeepSeek's deserialisation errors (serde's wording, without its trailing
// "at line L column C").
const deser = "Failed to deserialize the JSON body into the target type: "

// parsed is a request that deserialised, with what the answer needs.
type parsed struct {
	call         Call
	warnings     []string
	includeUsage bool
	prompt       []byte
}

// knownFields are the top-level request fields DeepSeek reads; others are warnings.
var knownFields = []string{
	"model", "messages", "tools", "tool_choice", "thinking", "reasoning_effort", "max_tokens",
	"stream", "stream_options", "temperature", "top_p", "presence_penalty", "frequency_penalty",
	"response_format", "stop", "logprobs", "top_logprobs", "n", "user",
}

var efforts = []string{"low", "medium", "high", "xhigh", "max", "minimal", "ultra"}

// describe words a JSON value's kind as serde does in "invalid type" errors.
func describe(raw json.RawMessage) string {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 {
		return "nothing"
	}
	switch t[0] {
	case '{':
		return "map"
	case '[':
		return "sequence"
	case '"':
		var s string
		_ = json.Unmarshal(t, &s)
		return fmt.Sprintf("string %q", s)
	case 't', 'f':
		return "boolean `" + string(t) + "`"
	case 'n':
		return "null"
	}
	if bytes.ContainsAny(t, ".eE") {
		return "floating point `" + string(t) + "`"
	}
	return "integer `" + string(t) + "`"
}

func typeErr(path string, raw json.RawMessage, expected string) string {
	p := path
	if p != "" {
		p += ": "
	}
	return deser + p + "invalid type: " + describe(raw) + ", expected " + expected
}

func isNull(raw json.RawMessage) bool {
	return len(raw) == 0 || string(bytes.TrimSpace(raw)) == "null"
}

func kind(raw json.RawMessage) byte {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 {
		return 0
	}
	return t[0]
}

// object decodes a JSON object of the body into its raw members.
func object(path string, raw json.RawMessage, expected string) (map[string]json.RawMessage, string) {
	if kind(raw) != '{' {
		return nil, typeErr(path, raw, expected)
	}
	return members(raw), ""
}

// str reads an optional string member (absent or null: ok false).
func str(m map[string]json.RawMessage, key, path string) (string, bool, string) {
	raw, ok := m[key]
	if !ok || isNull(raw) {
		return "", false, ""
	}
	if kind(raw) != '"' {
		return "", false, typeErr(join(path, key), raw, "a string")
	}
	return unquote(bytes.TrimSpace(raw)), true, ""
}

// required reads a required string member.
func required(m map[string]json.RawMessage, key, path string) (string, string) {
	if _, ok := m[key]; !ok {
		return "", deser + prefix(path) + "missing field `" + key + "`"
	}
	s, ok, e := str(m, key, path)
	if e != "" {
		return "", e
	}
	if !ok {
		return "", typeErr(join(path, key), m[key], "a string")
	}
	return s, ""
}

// sequence decodes a JSON array of the body into its raw elements.
func sequence(path string, raw json.RawMessage) ([]json.RawMessage, string) {
	if kind(raw) != '[' {
		return nil, typeErr(path, raw, "a sequence")
	}
	return elements(raw), ""
}

// variant is serde's error for an enum tag at path that is none of the allowed ones.
func variant(path, got string, allowed ...string) string {
	expected := "`" + strings.Join(allowed, "`, `") + "`"
	switch len(allowed) {
	case 1:
	case 2:
		expected = "`" + allowed[0] + "` or `" + allowed[1] + "`"
	default:
		expected = "one of " + expected
	}
	return deser + path + ": unknown variant `" + got + "`, expected " + expected
}

// function reads the `"type": "function"` tag of the tool, tool call or tool choice obj at
// path, and decodes its "function" member as expected (serde's name for its struct).
// tagPath is where serde reports an unknown tag.
func function(obj map[string]json.RawMessage, path, tagPath, expected string) (map[string]json.RawMessage, string) {
	typ, e := required(obj, "type", path)
	if e != "" {
		return nil, e
	}
	if typ != "function" {
		return nil, variant(tagPath, typ, "function")
	}
	rawFn, ok := obj["function"]
	if !ok {
		return nil, deser + path + ": missing field `function`"
	}
	return object(path+".function", rawFn, expected)
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func prefix(path string) string {
	if path == "" {
		return ""
	}
	return path + ": "
}

// parse applies every rule to a request body: deserialisation first (D1–D5, T4, E1, E2),
// then the model (M1, M2) and the semantic rules (O1, T1–T3, T5, T6, P1, P2, R1, O3, O4).
// It returns the parsed request (nil when the body is not an object) and the error message
// of the first broken rule ("" when none).
func parse(body []byte, models map[string]bool, known *memo) (*parsed, string) {
	if !json.Valid(body) {
		var v any
		err := json.Unmarshal(body, &v)
		return nil, deser + err.Error()
	}
	top, e := object("", body, "struct ChatCompletionRequest")
	if e != "" {
		return nil, e
	}
	p := &parsed{}
	c := &p.call
	for k := range top {
		if !slices.Contains(knownFields, k) {
			p.warnings = append(p.warnings, fmt.Sprintf("unknown field %q ignored", k))
		}
	}
	slices.Sort(p.warnings)

	model, e := required(top, "model", "")
	if e != "" {
		return p, e
	}
	c.Model = model
	rawMsgs, ok := top["messages"]
	if !ok {
		return p, deser + "missing field `messages`"
	}
	msgs, e := sequence("messages", rawMsgs)
	if e != "" {
		return p, e
	}
	if len(msgs) > 0 {
		c.Messages = make([]Message, 0, len(msgs))
	}
	for i, raw := range msgs {
		m, ok := known.message(raw)
		if !ok {
			m, e = parseMessage(fmt.Sprintf("messages[%d]", i), raw)
			if e != "" {
				return p, e
			}
			known.remember(raw, m)
		}
		c.Messages = append(c.Messages, m)
	}

	// thinking and reasoning_effort (E1, E2)
	c.Thinking = true
	if raw, ok := top["thinking"]; ok && !isNull(raw) {
		th, e := object("thinking", raw, "struct Thinking")
		if e != "" {
			return p, e
		}
		typ, e := required(th, "type", "thinking")
		if e != "" {
			return p, e
		}
		switch typ {
		case "enabled":
		case "disabled":
			c.Thinking = false
		default:
			return p, variant("thinking.type", typ, "enabled", "disabled")
		}
	}
	effort, _, e := str(top, "reasoning_effort", "")
	if e != "" {
		return p, e
	}
	if effort != "" && !slices.Contains(efforts, effort) {
		return p, variant("reasoning_effort", effort, efforts...)
	}
	c.ReasoningEffort = effort

	// stream, stream_options, max_tokens, n
	if raw, ok := top["stream"]; ok && !isNull(raw) {
		if err := json.Unmarshal(raw, &c.Stream); err != nil {
			return p, typeErr("stream", raw, "a boolean")
		}
	}
	if raw, ok := top["stream_options"]; ok && !isNull(raw) {
		so, e := object("stream_options", raw, "struct StreamOptions")
		if e != "" {
			return p, e
		}
		if iu, ok := so["include_usage"]; ok && !isNull(iu) {
			if err := json.Unmarshal(iu, &p.includeUsage); err != nil {
				return p, typeErr("stream_options.include_usage", iu, "a boolean")
			}
		}
		if !c.Stream {
			p.warnings = append(p.warnings, "stream_options without stream")
		}
	}
	if raw, ok := top["max_tokens"]; ok && !isNull(raw) {
		var n int64
		if err := json.Unmarshal(raw, &n); err != nil {
			return p, typeErr("max_tokens", raw, "u32")
		}
		if n < 1 || n > MaxTokensLimit {
			return p, fmt.Sprintf("Invalid max_tokens value, the valid range of max_tokens is [1, %d]", MaxTokensLimit)
		}
		c.MaxTokens = int(n)
	}
	if raw, ok := top["n"]; ok && !isNull(raw) && string(bytes.TrimSpace(raw)) != "1" {
		p.warnings = append(p.warnings, "n other than 1 ignored")
	}
	if c.Thinking {
		for _, k := range []string{"temperature", "top_p", "presence_penalty", "frequency_penalty"} {
			if _, ok := top[k]; ok {
				p.warnings = append(p.warnings, k+" has no effect in thinking mode")
			}
		}
	}

	// tools (T4 while deserialising; T1–T3 after)
	type tool struct {
		name   string
		params json.RawMessage
	}
	var tools []tool
	rawTools, hasTools := top["tools"]
	if hasTools && !isNull(rawTools) {
		list, e := sequence("tools", rawTools)
		if e != "" {
			return p, e
		}
		for i, raw := range list {
			path := fmt.Sprintf("tools[%d]", i)
			t, e := object(path, raw, "struct ChatCompletionTool")
			if e != "" {
				return p, e
			}
			fn, e := function(t, path, path, "struct FunctionObject")
			if e != "" {
				return p, e
			}
			name, e := required(fn, "name", path+".function")
			if e != "" {
				return p, e
			}
			desc, _, e := str(fn, "description", path+".function")
			if e != "" {
				return p, e
			}
			if desc == "" {
				p.warnings = append(p.warnings, fmt.Sprintf("tool %q has no description", name))
			}
			if _, ok := fn["strict"]; ok {
				p.warnings = append(p.warnings, fmt.Sprintf("tool %q: strict is for the beta endpoint only", name))
			}
			tools = append(tools, tool{name: name, params: fn["parameters"]})
		}
	}

	// tool_choice (deserialised; T5, T6 after)
	choice := ""
	if raw, ok := top["tool_choice"]; ok && !isNull(raw) {
		switch kind(raw) {
		case '"':
			_ = json.Unmarshal(raw, &choice)
			if choice != "auto" && choice != "none" && choice != "required" {
				return p, variant("tool_choice", choice, "none", "auto", "required")
			}
		case '{':
			tc, _ := object("tool_choice", raw, "")
			fn, e := function(tc, "tool_choice", "tool_choice.type", "struct FunctionName")
			if e != "" {
				return p, e
			}
			name, e := required(fn, "name", "tool_choice.function")
			if e != "" {
				return p, e
			}
			choice = "function:" + name
		default:
			return p, deser + "tool_choice: data did not match any variant of untagged enum ChatCompletionToolChoiceOption"
		}
	}
	c.ToolChoice = choice

	// response_format (deserialised; O3, O4 after)
	format := ""
	if raw, ok := top["response_format"]; ok && !isNull(raw) {
		rf, e := object("response_format", raw, "internally tagged enum ResponseFormat")
		if e != "" {
			return p, e
		}
		format, e = required(rf, "type", "response_format")
		if e != "" {
			return p, e
		}
		if format != "text" && format != "json_object" && format != "json_schema" {
			return p, variant("response_format", format, "text", "json_object", "json_schema")
		}
	}

	// The request deserialised; now the model and the semantic rules.
	switch {
	case model == "deepseek-chat" || model == "deepseek-reasoner":
		return p, "The supported API model names are deepseek-v4-pro or deepseek-v4-flash, but you passed " + model + "."
	case !models[model]:
		return p, "Model Not Exist"
	}

	if len(tools) > MaxTools {
		return p, fmt.Sprintf("Invalid tools: at most %d tools are supported per request, but %d were passed", MaxTools, len(tools))
	}
	seen := map[string]bool{}
	for i, t := range tools {
		if !nameRE.MatchString(t.name) {
			return p, fmt.Sprintf("Invalid tools[%d].function.name: %q must match ^[a-zA-Z0-9_-]{1,64}$", i, t.name)
		}
		if seen[t.name] {
			p.warnings = append(p.warnings, fmt.Sprintf("duplicate tool name %q", t.name))
		}
		seen[t.name] = true
		if t.params != nil {
			obj, e := object("", t.params, "")
			if e != "" {
				return p, fmt.Sprintf("Invalid tools[%d].function.parameters: must be a JSON object, got %s", i, describe(t.params))
			}
			if typ, ok := obj["type"]; ok && string(bytes.TrimSpace(typ)) != `"object"` {
				return p, fmt.Sprintf("Invalid tools[%d].function.parameters: the top-level type must be \"object\", got %s", i, bytes.TrimSpace(typ))
			}
		}
		c.Tools = append(c.Tools, t.name)
	}
	if choice == "required" || strings.HasPrefix(choice, "function:") {
		if len(tools) == 0 {
			return p, "Invalid tool_choice: it requires tools, but none were passed"
		}
		if name, ok := strings.CutPrefix(choice, "function:"); ok && !seen[name] {
			return p, fmt.Sprintf("Invalid tool_choice: function %q is not among the tools", name)
		}
		if c.Thinking {
			return p, "Thinking mode does not support this tool_choice"
		}
	}

	if e := pairing(c.Messages); e != "" {
		return p, e
	}
	if c.Thinking {
		if e := passback(c.Messages, &p.warnings); e != "" {
			return p, e
		}
	}

	switch format {
	case "json_schema":
		return p, "This response_format type is unavailable now"
	case "json_object":
		found := false
		for _, m := range c.Messages {
			if strings.Contains(strings.ToLower(m.Content), "json") {
				found = true
				break
			}
		}
		if !found {
			return p, "Prompt must contain the word 'json' in some form to use 'response_format' of type 'json_object'."
		}
	}

	// The prompt the prefix cache compares: leading system messages, tools, the rest.
	size := len(rawTools)
	for _, raw := range msgs {
		size += len(raw)
	}
	p.prompt = make([]byte, 0, size)
	i := 0
	for i < len(msgs) && c.Messages[i].Role == "system" {
		p.prompt = append(p.prompt, msgs[i]...)
		i++
	}
	if hasTools && !isNull(rawTools) {
		p.prompt = append(p.prompt, rawTools...)
	}
	for ; i < len(msgs); i++ {
		p.prompt = append(p.prompt, msgs[i]...)
	}
	return p, ""
}

// memo remembers the messages that passed the rules, by their raw JSON: a conversation sends
// its whole history back on every request, and each message is parsed once, not once per
// request. A nil memo remembers nothing. It is safe for concurrent use.
type memo struct {
	mu   sync.Mutex
	msgs map[string]Message
}

// message returns a copy of the message parsed from raw before, if any.
func (k *memo) message(raw json.RawMessage) (Message, bool) {
	if k == nil {
		return Message{}, false
	}
	k.mu.Lock()
	m, ok := k.msgs[string(raw)]
	k.mu.Unlock()
	if ok {
		// The copy shares nothing a caller could change with the remembered message.
		m.ToolCalls = slices.Clone(m.ToolCalls)
		if m.Reasoning != nil {
			r := *m.Reasoning
			m.Reasoning = &r
		}
	}
	return m, ok
}

// remember records the message parsed from raw.
func (k *memo) remember(raw json.RawMessage, m Message) {
	if k == nil {
		return
	}
	m.ToolCalls = slices.Clone(m.ToolCalls)
	k.mu.Lock()
	if k.msgs == nil {
		k.msgs = map[string]Message{}
	}
	k.msgs[string(raw)] = m
	k.mu.Unlock()
}

// parseMessage deserialises one message (D2–D5).
func parseMessage(path string, raw json.RawMessage) (Message, string) {
	var m Message
	obj, e := object(path, raw, "internally tagged enum ChatCompletionRequestMessage")
	if e != "" {
		return m, e
	}
	role, e := required(obj, "role", path)
	if e != "" {
		return m, e
	}
	m.Role = role
	switch role {
	case "system", "user":
		rawC, ok := obj["content"]
		if !ok {
			return m, deser + path + ": missing field `content`"
		}
		text, ok := textContent(rawC)
		if !ok {
			return m, deser + path + ": data did not match any variant of untagged enum ChatCompletionRequestContent"
		}
		m.Content = text
	case "assistant":
		if rawC, ok := obj["content"]; ok && !isNull(rawC) {
			text, ok := textContent(rawC)
			if !ok {
				return m, deser + path + ": data did not match any variant of untagged enum ChatCompletionRequestContent"
			}
			m.Content = text
		}
		if rawR, ok := obj["reasoning_content"]; ok && !isNull(rawR) {
			if kind(rawR) != '"' {
				return m, typeErr(path+".reasoning_content", rawR, "a string")
			}
			s := unquote(bytes.TrimSpace(rawR))
			m.Reasoning = &s
		}
		if rawT, ok := obj["tool_calls"]; ok && !isNull(rawT) {
			calls, e := sequence(path+".tool_calls", rawT)
			if e != "" {
				return m, e
			}
			for j, rc := range calls {
				cp := fmt.Sprintf("%s.tool_calls[%d]", path, j)
				tc, e := object(cp, rc, "struct ChatCompletionMessageToolCall")
				if e != "" {
					return m, e
				}
				id, e := required(tc, "id", cp)
				if e != "" {
					return m, e
				}
				fn, e := function(tc, cp, cp+".type", "struct FunctionCall")
				if e != "" {
					return m, e
				}
				name, e := required(fn, "name", cp+".function")
				if e != "" {
					return m, e
				}
				args, e := required(fn, "arguments", cp+".function")
				if e != "" {
					return m, e
				}
				m.ToolCalls = append(m.ToolCalls, ToolCall{ID: id, Name: name, Arguments: args})
			}
		}
	case "tool":
		rawC, ok := obj["content"]
		if !ok {
			return m, deser + path + ": missing field `content`"
		}
		if kind(rawC) != '"' {
			return m, deser + path + ": invalid type: " + describe(rawC) + ", expected a string"
		}
		m.Content = unquote(bytes.TrimSpace(rawC))
		id, e := required(obj, "tool_call_id", path)
		if e != "" {
			return m, e
		}
		m.ToolCallID = id
	default:
		return m, variant(path+".role", role, "system", "user", "assistant", "tool")
	}
	return m, ""
}

// textContent reads a string or an array of text parts.
func textContent(raw json.RawMessage) (string, bool) {
	switch kind(raw) {
	case '"':
		return unquote(bytes.TrimSpace(raw)), true
	case '[':
		var parts []map[string]json.RawMessage
		if json.Unmarshal(raw, &parts) != nil {
			return "", false
		}
		var b strings.Builder
		for _, part := range parts {
			typ, ok, e := str(part, "type", "")
			if e != "" || !ok || typ != "text" {
				return "", false
			}
			text, ok, e := str(part, "text", "")
			if e != "" || !ok {
				return "", false
			}
			b.WriteString(text)
		}
		return b.String(), true
	}
	return "", false
}

// pairing checks P1 and P2: each tool call of an assistant message is answered by exactly
// one tool message, right after it.
func pairing(msgs []Message) string {
	const insufficient = "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. (insufficient tool messages following tool_calls message)"
	const orphan = "Messages with role 'tool' must be a response to a preceding message with 'tool_calls'"
	pending := map[string]bool{}
	for _, m := range msgs {
		if m.Role == "tool" {
			if !pending[m.ToolCallID] {
				return orphan
			}
			delete(pending, m.ToolCallID)
			continue
		}
		if len(pending) > 0 {
			return insufficient
		}
		for _, tc := range m.ToolCalls {
			pending[tc.ID] = true
		}
	}
	if len(pending) > 0 {
		return insufficient
	}
	return ""
}

// passback checks R1 as documented: in each stretch between user messages that contains an
// assistant message with tool calls, every assistant message carries reasoning_content.
func passback(msgs []Message, warnings *[]string) string {
	start := 0
	for i := 0; i <= len(msgs); i++ {
		if i < len(msgs) && msgs[i].Role != "user" {
			continue
		}
		stretch := msgs[start:i]
		start = i + 1
		if !slices.ContainsFunc(stretch, func(m Message) bool { return m.Role == "assistant" && len(m.ToolCalls) > 0 }) {
			continue
		}
		for _, m := range stretch {
			if m.Role != "assistant" {
				continue
			}
			if m.Reasoning == nil {
				return "The `reasoning_content` in the thinking mode must be passed back to the API."
			}
			if *m.Reasoning == "" {
				*warnings = append(*warnings, "empty reasoning_content passed back")
			}
		}
	}
	return ""
}
