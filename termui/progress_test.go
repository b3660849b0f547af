package termui

import (
	"bytes"
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
