package termui

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/cordisgo/harness/plugins/mcpclient"
)

func TestProgressPrinterLines(t *testing.T) {
	var out bytes.Buffer
	p := NewProgress(&out, nil, "harness")
	_ = p.Report(mcpclient.Progress{Server: "s", Target: "build", Token: "t1", Progress: 3, Total: 12, Message: "compiling\nmore", Elapsed: 1500 * time.Millisecond})
	_ = p.Report(mcpclient.Progress{Server: "s", Target: "scan", Token: "t2", Progress: 7, Elapsed: time.Second})
	_ = p.Report(mcpclient.Progress{Server: "s", Target: "build", Token: "t1", Done: true})
	want := "harness: progress: s/build 3/12 (25%) compiling, 2s\nharness: progress: s/scan 7, 1s\n"
	if out.String() != want {
		t.Fatalf("got %q\nwant %q", out.String(), want)
	}
}

func TestProgressPrinterBar(t *testing.T) {
	var out bytes.Buffer
	p := NewProgress(&out, &Lines{w: &out}, "harness")
	_ = p.Report(mcpclient.Progress{Server: "s", Target: "build", Token: "t1", Progress: 6, Total: 12})
	_ = p.Report(mcpclient.Progress{Server: "s", Target: "other", Token: "t2", Done: true}) // not on screen: nothing
	_ = p.Report(mcpclient.Progress{Server: "s", Target: "build", Token: "t1", Done: true})
	want := "\r\x1b[K[############............] s/build 6/12 (50%), 0s" + "\r\x1b[K"
	if out.String() != want {
		t.Fatalf("got %q\nwant %q", out.String(), want)
	}
}

// A report that arrives after its request ended draws no bar and prints no line; another
// server's request with the same token is another request.
func TestProgressPrinterIgnoresFinished(t *testing.T) {
	for _, term := range []bool{false, true} {
		var out bytes.Buffer
		p := NewProgress(&out, nil, "harness")
		if term {
			p = NewProgress(&out, &Lines{w: &out}, "harness")
		}
		_ = p.Report(mcpclient.Progress{Server: "s", Target: "build", Token: "t1", Done: true})
		_ = p.Report(mcpclient.Progress{Server: "s", Target: "build", Token: "t1", Progress: 12, Total: 12})
		if out.Len() != 0 {
			t.Errorf("terminal %v: a finished call's report was shown: %q", term, out.String())
		}
		_ = p.Report(mcpclient.Progress{Server: "other", Target: "scan", Token: "t1", Progress: 1, Total: 2})
		if !bytes.Contains(out.Bytes(), []byte("other/scan 1/2")) {
			t.Errorf("terminal %v: another server's request was ignored: %q", term, out.String())
		}
	}
	// The printer forgets the oldest finished requests beyond finishedKept.
	p := NewProgress(&bytes.Buffer{}, nil, "harness")
	for i := range finishedKept + 10 {
		_ = p.Report(mcpclient.Progress{Server: "s", Token: fmt.Sprint(i), Done: true})
	}
	if len(p.finished) != finishedKept || len(p.order) != finishedKept {
		t.Errorf("remembers %d (%d in order), want %d", len(p.finished), len(p.order), finishedKept)
	}
}
