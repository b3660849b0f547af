package mcpresources

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
)

// modelText renders a provider's result for the model: a header naming the server, then the
// result as compact JSON (members in their original order) in which the value of every
// member named "blob" that is a string is replaced by a description of the binary data. The
// canonical result itself is never changed.
func modelText(server string, raw json.RawMessage) (string, error) {
	var b bytes.Buffer
	b.Grow(len("MCP server: \n") + len(server) + len(raw))
	b.WriteString("MCP server: ")
	b.WriteString(server)
	b.WriteByte('\n')
	if err := rewrite(&b, raw); err != nil {
		return "", err
	}
	return b.String(), nil
}

// rewrite appends raw, one JSON value, to b in compact form with blobs described.
func rewrite(b *bytes.Buffer, raw []byte) error {
	raw = bytes.TrimLeft(raw, " \t\r\n")
	if len(raw) == 0 {
		return errors.New("empty JSON value")
	}
	switch raw[0] {
	case '{':
		return rewriteObject(b, raw)
	case '[':
		return rewriteArray(b, raw)
	}
	if !json.Valid(raw) {
		return errors.New("not valid JSON")
	}
	return json.Compact(b, raw)
}

type member struct {
	key string
	val json.RawMessage
}

func rewriteObject(b *bytes.Buffer, raw []byte) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil { // {
		return err
	}
	var members []member
	mimeType := ""
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return err
		}
		key, _ := t.(string)
		var val json.RawMessage
		if err := dec.Decode(&val); err != nil {
			return err
		}
		if key == "mimeType" {
			var s string
			if json.Unmarshal(val, &s) == nil {
				mimeType = s
			}
		}
		members = append(members, member{key, val})
	}
	if _, err := dec.Token(); err != nil { // }
		return err
	}
	if err := trailing(dec); err != nil {
		return err
	}
	b.WriteByte('{')
	for i, m := range members {
		if i > 0 {
			b.WriteByte(',')
		}
		writeString(b, m.key)
		b.WriteByte(':')
		if m.key == "blob" && len(m.val) > 0 && m.val[0] == '"' {
			writeString(b, describeBlob(m.val, mimeType))
			continue
		}
		if err := rewrite(b, m.val); err != nil {
			return err
		}
	}
	b.WriteByte('}')
	return nil
}

func rewriteArray(b *bytes.Buffer, raw []byte) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil { // [
		return err
	}
	b.WriteByte('[')
	for i := 0; dec.More(); i++ {
		var val json.RawMessage
		if err := dec.Decode(&val); err != nil {
			return err
		}
		if i > 0 {
			b.WriteByte(',')
		}
		if err := rewrite(b, val); err != nil {
			return err
		}
	}
	if _, err := dec.Token(); err != nil { // ]
		return err
	}
	b.WriteByte(']')
	return trailing(dec)
}

// trailing fails when anything but white space follows the value dec has read.
func trailing(dec *json.Decoder) error {
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("data after the JSON value")
	}
	return nil
}

// writeString appends s as a JSON string, without HTML escaping.
func writeString(b *bytes.Buffer, s string) {
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)       // a string always encodes
	b.Truncate(b.Len() - 1) // Encode's newline
}

// describeBlob describes a base64 blob, given as a JSON string, by its decoded size (worked
// out from the encoding, without decoding it) and MIME type:
// "[binary blob: 1234 bytes, image/png]".
func describeBlob(raw json.RawMessage, mimeType string) string {
	var s []byte
	if bytes.IndexByte(raw, '\\') < 0 && len(raw) >= 2 {
		s = raw[1 : len(raw)-1]
	} else {
		var str string
		if err := json.Unmarshal(raw, &str); err != nil {
			return "[binary blob: not a valid JSON string]"
		}
		s = []byte(str)
	}
	desc := "[binary blob: "
	if n, ok := base64Size(s); ok {
		desc += strconv.Itoa(n) + " bytes"
	} else {
		desc += "not valid base64, " + strconv.Itoa(len(s)) + " characters"
	}
	if mimeType != "" {
		desc += ", " + mimeType
	}
	return desc + "]"
}

// base64Size returns the number of bytes that s, standard or URL-safe base64 with or without
// padding (white space ignored), decodes to. ok is false when s is not base64.
func base64Size(s []byte) (n int, ok bool) {
	chars, pad := 0, 0
	for _, c := range s {
		switch {
		case 'A' <= c && c <= 'Z', 'a' <= c && c <= 'z', '0' <= c && c <= '9',
			c == '+', c == '/', c == '-', c == '_':
			if pad > 0 {
				return 0, false
			}
			chars++
		case c == '=':
			pad++
		case c == ' ', c == '\t', c == '\r', c == '\n':
		default:
			return 0, false
		}
	}
	if pad > 2 || chars%4 == 1 || (pad > 0 && (chars+pad)%4 != 0) {
		return 0, false
	}
	return chars * 6 / 8, true
}
