package workspace

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"net/http"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Limits of read_file. They are in the tool's description and schema.
const (
	defaultReadLines = 2000
	maxLineBytes     = 2000      // a longer line is cut, with a marker
	maxReadBytes     = 128 << 10 // the text returned by one call
	maxImageBytes    = 5 << 20   // larger images are described, not sent
	sniffBytes       = 8 << 10   // what binary detection looks at
	// hashLimit is the largest file whose content hash a read records (and the largest an
	// edit works on): a larger one's change is seen by its size and time only.
	hashLimit = 64 << 20
)

type readInput struct {
	Path   string `json:"path" jsonschema:"the file, relative to the workspace root (or absolute inside it)"`
	Offset int    `json:"offset,omitempty" jsonschema:"the first line to return, counting from 1 (default 1)"`
	Limit  int    `json:"limit,omitempty" jsonschema:"how many lines to return (default 2000)"`
}

// snapshot is what a read saw of a file, to tell later whether it changed.
type snapshot struct {
	size    int64
	modTime time.Time
	sum     [sha256.Size]byte
	hashed  bool
}

// same reports whether two snapshots are of the same content.
func (a snapshot) same(b snapshot) bool {
	if a.hashed && b.hashed {
		return a.sum == b.sum
	}
	return a.size == b.size && a.modTime.Equal(b.modTime)
}

// readRecords remembers, per file, what the last read (or write) through this server saw.
// It is safe for concurrent use.
type readRecords struct {
	mu sync.Mutex
	m  map[string]snapshot
}

// maxRecords bounds the records kept; beyond it the oldest half is forgotten (a file whose
// record is gone is edited as one never read).
const maxRecords = 10000

func newReadRecords() *readRecords { return &readRecords{m: map[string]snapshot{}} }

func (r *readRecords) put(rel string, s snapshot) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.m) >= maxRecords {
		n := 0
		for k := range r.m {
			delete(r.m, k)
			if n++; n >= maxRecords/2 {
				break
			}
		}
	}
	r.m[rel] = s
}

func (r *readRecords) get(rel string) (snapshot, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s, ok := r.m[rel]
	return s, ok
}

// readFile is read_file.
func (s *Server) readFile(_ context.Context, _ *mcp.CallToolRequest, in readInput) (*mcp.CallToolResult, any, error) {
	rel, err := s.root.rel(in.Path)
	if err != nil {
		return nil, nil, err
	}
	if in.Offset < 0 || in.Limit < 0 {
		return nil, nil, errors.New("offset and limit must not be negative")
	}
	f, err := s.root.r.Open(rel)
	if err != nil {
		return nil, nil, fileError(in.Path, err)
	}
	defer func() { _ = f.Close() }()
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, fileError(in.Path, err)
	}
	if fi.IsDir() {
		return nil, nil, fmt.Errorf("%q is a directory: list it with list_dir", in.Path)
	}
	if !fi.Mode().IsRegular() {
		return nil, nil, fmt.Errorf("%q is not a regular file (%s)", in.Path, fi.Mode().Type())
	}
	snap := snapshot{size: fi.Size(), modTime: fi.ModTime()}
	var h hash.Hash
	var src io.Reader = f
	if fi.Size() <= hashLimit {
		h = sha256.New()
		src = io.TeeReader(f, h)
	}
	br := bufio.NewReaderSize(src, 64<<10)
	head, _ := br.Peek(sniffBytes)
	kind := http.DetectContentType(head)
	if strings.HasPrefix(kind, "image/") && kind != "image/svg+xml" {
		return s.readImage(rel, fi, kind, br, h, snap)
	}
	if bytes.IndexByte(head, 0) >= 0 {
		return text(fmt.Sprintf("%s: a binary file (%s, %d bytes); not shown", rel, kind, fi.Size())), nil, nil
	}
	out, err := readLines(br, in.Offset, in.Limit, fi.Size())
	if err != nil {
		return nil, nil, fileError(in.Path, err)
	}
	if h != nil {
		if _, err := io.Copy(io.Discard, br); err != nil {
			return nil, nil, fileError(in.Path, err)
		}
		copy(snap.sum[:], h.Sum(nil))
		snap.hashed = true
	}
	s.reads.put(rel, snap)
	return text(out), nil, nil
}

// readImage returns an image file as image content.
func (s *Server) readImage(rel string, fi fs.FileInfo, kind string, br *bufio.Reader, h hash.Hash, snap snapshot) (*mcp.CallToolResult, any, error) {
	if fi.Size() > maxImageBytes {
		return text(fmt.Sprintf("%s: an image (%s, %d bytes), larger than the %d bytes sent; not shown", rel, kind, fi.Size(), maxImageBytes)), nil, nil
	}
	data, err := io.ReadAll(br)
	if err != nil {
		return nil, nil, fileError(rel, err)
	}
	if h != nil {
		copy(snap.sum[:], h.Sum(nil))
		snap.hashed = true
	}
	s.reads.put(rel, snap)
	return &mcp.CallToolResult{Content: []mcp.Content{
		&mcp.TextContent{Text: fmt.Sprintf("%s: %s, %d bytes", rel, kind, len(data))},
		&mcp.ImageContent{Data: data, MIMEType: kind},
	}}, nil, nil
}

// readLines returns lines offset.. (1-based; 0 means 1) of r, at most limit (0: the
// default), numbered as `cat -n` numbers them, long lines cut, the whole at most
// maxReadBytes, and a last line saying what was left out. It reads r only as far as it
// returns lines: the memory it uses does not grow with the file.
func readLines(r *bufio.Reader, offset, limit int, size int64) (string, error) {
	if offset == 0 {
		offset = 1
	}
	if limit == 0 {
		limit = defaultReadLines
	}
	var b strings.Builder
	n := 0 // lines read
	shown := 0
	cut := false
	for ; n < offset-1; n++ {
		if err := skipLine(r); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return "", err
		}
	}
	for {
		line, long, err := readLine(r)
		eof := errors.Is(err, io.EOF)
		if eof && line == nil {
			break
		}
		if err != nil && !eof {
			return "", err
		}
		n++
		if shown >= limit || b.Len() >= maxReadBytes {
			cut = true
			break
		}
		fmt.Fprintf(&b, "%6d\t", n)
		b.Write(validUTF8(line))
		if long > 0 {
			fmt.Fprintf(&b, " […line cut: %d more bytes]", long)
		}
		b.WriteByte('\n')
		shown++
		if eof {
			break
		}
	}
	switch {
	case size == 0:
		return "(an empty file)", nil
	case shown == 0:
		return fmt.Sprintf("(the file has %d lines; offset %d is past its end)", n, offset), nil
	case cut:
		fmt.Fprintf(&b, "[lines %d-%d shown; the file goes on: continue with offset %d]\n", offset, offset+shown-1, offset+shown)
	}
	return b.String(), nil
}

// skipLine reads past one line, copying nothing; io.EOF means there was none.
func skipLine(r *bufio.Reader) error {
	for read := 0; ; {
		frag, err := r.ReadSlice('\n')
		read += len(frag)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err == io.EOF && read > 0:
			return nil
		default:
			return err
		}
	}
}

// readLine reads one line without its end: the first maxLineBytes bytes of it, and how many
// more there were (read and dropped).
func readLine(r *bufio.Reader) (line []byte, more int, err error) {
	for {
		frag, ferr := r.ReadSlice('\n')
		chunk := frag
		if ferr == nil {
			chunk = bytes.TrimSuffix(bytes.TrimSuffix(frag, []byte("\n")), []byte("\r"))
		}
		if room := maxLineBytes - len(line); room > 0 {
			take := min(room, len(chunk))
			line = append(line, chunk[:take]...)
			more += len(chunk) - take
		} else {
			more += len(chunk)
		}
		switch {
		case ferr == nil:
			return nonNil(line), more, nil
		case errors.Is(ferr, bufio.ErrBufferFull):
			continue
		case ferr == io.EOF && len(line) == 0 && more == 0:
			return nil, 0, io.EOF
		default:
			return nonNil(line), more, ferr
		}
	}
}

func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

// validUTF8 replaces what is not UTF-8 (a line cut in the middle of a character, a file in
// another encoding) with U+FFFD, as the JSON encoding would.
func validUTF8(b []byte) []byte {
	if utf8.Valid(b) {
		return b
	}
	return bytes.ToValidUTF8(b, []byte("\uFFFD"))
}

// fileError words a file system error about path for the model.
func fileError(path string, err error) error {
	var pe *PathError
	switch {
	case errors.As(err, &pe):
		return err
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%q does not exist", path)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("%q: permission denied", path)
	}
	var perr *fs.PathError
	if errors.As(err, &perr) {
		return fmt.Errorf("%q: %s: %w", path, perr.Op, perr.Err)
	}
	return fmt.Errorf("%q: %w", path, err)
}

// text is a result of one text block.
func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}
