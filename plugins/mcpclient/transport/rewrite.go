package transport

import (
	"bufio"
	"bytes"
	"io"
	"mime"
	"net/http"
)

// maxRewrittenBody bounds a JSON body read whole to be rewritten; a larger one passes
// unchanged.
const maxRewrittenBody = 64 << 20

// rewriteBody applies fn to the JSON-RPC messages of a server's response: the whole body
// of an application/json response (one message), the data line of each event of a
// text/event-stream, as the client reads them. Other bodies, and events whose data spans
// several lines, pass unchanged.
func rewriteBody(resp *http.Response, fn func([]byte) []byte) {
	if resp.Body == nil || resp.Body == http.NoBody {
		return
	}
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch ct {
	case "application/json":
		b, err := io.ReadAll(io.LimitReader(resp.Body, maxRewrittenBody+1))
		rest := resp.Body
		if err != nil || len(b) > maxRewrittenBody {
			resp.Body = readCloser{io.MultiReader(bytes.NewReader(b), rest), rest}
			return
		}
		_ = rest.Close()
		out := fn(b)
		resp.Body = io.NopCloser(bytes.NewReader(out))
		resp.ContentLength = int64(len(out))
		resp.Header.Del("Content-Length")
	case "text/event-stream":
		resp.Body = &sseRewriter{src: resp.Body, r: bufio.NewReader(resp.Body), fn: fn}
	}
}

type readCloser struct {
	io.Reader
	io.Closer
}

// sseRewriter rewrites the data lines of an event stream as they are read.
type sseRewriter struct {
	src     io.Closer
	r       *bufio.Reader
	fn      func([]byte) []byte
	pending []byte // rewritten bytes not read yet
	err     error  // the source's error, returned once pending is drained
}

func (s *sseRewriter) Read(p []byte) (int, error) {
	for len(s.pending) == 0 {
		if s.err != nil {
			return 0, s.err
		}
		line, err := s.r.ReadBytes('\n')
		s.err = err
		s.pending = s.rewriteLine(line)
	}
	n := copy(p, s.pending)
	s.pending = s.pending[n:]
	return n, nil
}

// rewriteLine rewrites one "data:" line, keeping its line ending.
func (s *sseRewriter) rewriteLine(line []byte) []byte {
	data, ok := bytes.CutPrefix(line, []byte("data:"))
	if !ok {
		return line
	}
	body := bytes.TrimRight(data, "\r\n")
	end := data[len(body):]
	lead := len(body) - len(bytes.TrimLeft(body, " "))
	out := s.fn(body[lead:])
	if bytes.Equal(out, body[lead:]) {
		return line
	}
	rewritten := make([]byte, 0, len(out)+len(end)+6)
	rewritten = append(append(append(rewritten, "data: "...), out...), end...)
	return rewritten
}

func (s *sseRewriter) Close() error { return s.src.Close() }
