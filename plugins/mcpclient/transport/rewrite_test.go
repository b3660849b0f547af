package transport

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"
)

// upper rewrites messages that contain "task" by upper-casing them.
func upper(b []byte) []byte {
	if !bytes.Contains(b, []byte("task")) {
		return b
	}
	return bytes.ToUpper(b)
}

// The rewrite sees each JSON body whole and each event's data line, and leaves the rest of
// a stream (ids, event names, blank lines, comments) as it came.
func TestRewriteBody(t *testing.T) {
	for _, tc := range []struct {
		name, ct, in, want string
	}{
		{"json", "application/json; charset=utf-8", `{"task":1}`, `{"TASK":1}`},
		{"json untouched", "application/json", `{"x":1}`, `{"x":1}`},
		{"event stream", "text/event-stream",
			"id: 1\nevent: message\ndata: {\"task\":1}\n\n: comment\ndata:{\"x\":1}\r\n\ndata: {\"task\":2}",
			"id: 1\nevent: message\ndata: {\"TASK\":1}\n\n: comment\ndata:{\"x\":1}\r\n\ndata: {\"TASK\":2}"},
		{"other", "text/plain", "task", "task"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := &http.Response{Header: http.Header{"Content-Type": {tc.ct}}, Body: io.NopCloser(strings.NewReader(tc.in))}
			rewriteBody(resp, upper)
			// Read in small pieces, as a client reading a stream does.
			var got bytes.Buffer
			buf := make([]byte, 3)
			for {
				n, err := resp.Body.Read(buf)
				got.Write(buf[:n])
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			if got.String() != tc.want {
				t.Errorf("got %q, want %q", got.String(), tc.want)
			}
			if err := resp.Body.Close(); err != nil {
				t.Fatal(err)
			}
		})
	}
}
